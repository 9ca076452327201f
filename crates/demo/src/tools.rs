//! What each demo tool does when called, and the per-process state the
//! stateful ones (`flaky`, `call_counts`) keep.

use std::{
    collections::{BTreeMap, HashMap},
    sync::{
        Mutex, PoisonError,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use rmcp::{
    ErrorData,
    model::{CallToolResult, ContentBlock, JsonObject, MetaObject},
};
use serde::{Deserialize, de::DeserializeOwned};
use serde_json::{Number, Value, json};
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use super::{
    catalog::{
        DEFAULT_EXIT_CODE, DEFAULT_FAIL_MESSAGE, DEFAULT_FAILURES, DEFAULT_ITEM_PREFIX,
        DEFAULT_ITEMS, DEFAULT_LIMIT, DemoTool, MAX_BIG_KB, MAX_FAILURES, MAX_ITEMS, MAX_LIMIT,
        MAX_SLOW_MS,
    },
    data,
    written::Written,
};

/// Words `summarize` keeps.
const SUMMARY_WORDS: usize = 12;
/// What `summarize` reports as its cost, in US dollars.
const SUMMARY_COST_USD: f64 = 0.002;
/// Serialised size of one `big_output` record, in bytes.
const RECORD_BYTES: usize = 256;

/// State shared by every session of one server: call counters, the calls
/// running now and the `flaky` attempt counters.
#[derive(Debug, Default)]
pub(crate) struct State {
    /// Calls per tool, indexed by `DemoTool as usize`.
    calls: [AtomicU64; DemoTool::ALL.len()],
    in_flight: AtomicU64,
    flaky: Mutex<HashMap<String, u64>>,
    /// Pause before every call (see `DemoServerOptions::call_delay`).
    call_delay: Duration,
    /// Where a big result goes as text when the transport writes text
    /// (stdio); `None`: every result is a tree.
    written: Option<Written>,
}

impl State {
    /// Fresh counters, and `call_delay` before every call but `call_counts`.
    pub(crate) fn new(call_delay: Duration) -> Self {
        Self {
            call_delay,
            ..Self::default()
        }
    }

    /// The same state, handing big results to `written` as text.
    pub(crate) fn writing(mut self, written: Written) -> Self {
        self.written = Some(written);
        self
    }
}

/// Counts a call as running until dropped, whichever way the call ends.
struct InFlight<'a>(&'a AtomicU64);

impl<'a> InFlight<'a> {
    fn enter(counter: &'a AtomicU64) -> Self {
        counter.fetch_add(1, Ordering::SeqCst);
        InFlight(counter)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A tool's answer: `Err` holds the text of a tool error (`isError: true`).
type Outcome = Result<CallToolResult, String>;

/// Run the tool called `name`. An unknown name is a protocol error (invalid
/// params); everything that goes wrong inside a tool, bad arguments
/// included, is a tool error the caller can read.
pub(crate) async fn call(
    state: &State,
    name: &str,
    arguments: Option<JsonObject>,
    ct: &CancellationToken,
) -> Result<CallToolResult, ErrorData> {
    let Some(tool) = DemoTool::from_name(name) else {
        let known: Vec<&str> = DemoTool::ALL.iter().map(|tool| tool.name()).collect();
        return Err(ErrorData::invalid_params(
            format!(
                "unknown tool `{name}`; the demo server has: {}",
                known.join(", ")
            ),
            None,
        ));
    };
    let arguments = arguments.unwrap_or_default();
    if tool == DemoTool::CallCounts {
        return Ok(finish(call_counts(state, arguments)));
    }
    state.calls[tool as usize].fetch_add(1, Ordering::SeqCst);
    let _running = InFlight::enter(&state.in_flight);
    if !state.call_delay.is_zero() {
        tokio::select! {
            () = tokio::time::sleep(state.call_delay) => {}
            () = ct.cancelled() => return Ok(finish(Err(format!("{name}: cancelled")))),
        }
    }
    let outcome = match tool {
        DemoTool::SearchUsers => search_users(arguments),
        DemoTool::GetUserDetails => get_user_details(arguments),
        DemoTool::SendEmail => send_email(arguments),
        DemoTool::DeleteUser => delete_user(arguments),
        DemoTool::SearchPackages => search_packages(arguments),
        DemoTool::GetReadme => get_readme(arguments),
        DemoTool::FetchMetadata => fetch_metadata(arguments),
        DemoTool::ListItems => list_items(arguments),
        DemoTool::Echo => echo(arguments),
        DemoTool::Add => add(arguments),
        DemoTool::Flaky => flaky(state, arguments),
        DemoTool::Slow => slow(arguments, ct).await,
        DemoTool::BigOutput => big_output(arguments, state.written.as_ref()),
        DemoTool::Fail => fail(arguments),
        DemoTool::Crash => crash(arguments),
        DemoTool::Summarize => summarize(arguments),
        DemoTool::CallCounts => call_counts(state, arguments),
        DemoTool::ConfirmSend | DemoTool::ConnectAccount | DemoTool::DraftReply => {
            Err(format!("{name}: asks the client, see `asking::call`"))
        }
    };
    Ok(finish(outcome))
}

/// Counts a call of `tool` made outside [`call`], running until the guard
/// drops.
pub(crate) fn counted(state: &State, tool: DemoTool) -> impl Drop + '_ {
    state.calls[tool as usize].fetch_add(1, Ordering::SeqCst);
    InFlight::enter(&state.in_flight)
}

fn finish(outcome: Outcome) -> CallToolResult {
    outcome.unwrap_or_else(|message| CallToolResult::error(vec![ContentBlock::text(message)]))
}

/// A success carrying `value` as structured content and as JSON text.
fn structured(value: Value) -> Outcome {
    Ok(CallToolResult::structured(value))
}

/// A success carrying only this text.
fn text(text: impl Into<String>) -> Outcome {
    Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
}

fn parse<T: DeserializeOwned>(tool: DemoTool, arguments: JsonObject) -> Result<T, String> {
    serde_json::from_value(Value::Object(arguments))
        .map_err(|error| format!("{}: invalid arguments: {error}", tool.name()))
}

fn at_most(tool: DemoTool, field: &str, value: u64, max: u64) -> Result<(), String> {
    if value > max {
        return Err(format!(
            "{}: `{field}` must be at most {max}, got {value}",
            tool.name()
        ));
    }
    Ok(())
}

fn default_limit() -> u64 {
    DEFAULT_LIMIT
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchUsersArgs {
    query: String,
    #[serde(default = "default_limit")]
    limit: u64,
}

fn search_users(arguments: JsonObject) -> Outcome {
    let tool = DemoTool::SearchUsers;
    let args: SearchUsersArgs = parse(tool, arguments)?;
    at_most(tool, "limit", args.limit, MAX_LIMIT)?;
    let users: Vec<Value> = data::search_users(&args.query)
        .take(usize::try_from(args.limit).unwrap_or(usize::MAX))
        .map(|user| json!({ "id": user.id, "name": user.name, "email": user.email }))
        .collect();
    structured(json!({ "users": users, "count": users.len() }))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UserIdArgs {
    user_id: String,
}

fn known_user(tool: DemoTool, id: &str) -> Result<&'static data::User, String> {
    data::user(id).ok_or_else(|| {
        format!(
            "{}: no user with id {id:?} (ids run from u1 to u{})",
            tool.name(),
            data::USERS.len()
        )
    })
}

fn get_user_details(arguments: JsonObject) -> Outcome {
    let tool = DemoTool::GetUserDetails;
    let args: UserIdArgs = parse(tool, arguments)?;
    let user = known_user(tool, &args.user_id)?;
    structured(json!({
        "id": user.id,
        "name": user.name,
        "email": user.email,
        "plan": user.plan,
        "created": user.created,
        "last_login": user.last_login,
        "teams": user.teams,
    }))
}

fn delete_user(arguments: JsonObject) -> Outcome {
    let tool = DemoTool::DeleteUser;
    let args: UserIdArgs = parse(tool, arguments)?;
    let user = known_user(tool, &args.user_id)?;
    structured(json!({ "deleted": user.id }))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SendEmailArgs {
    to: String,
    subject: String,
    body: String,
}

fn send_email(arguments: JsonObject) -> Outcome {
    let tool = DemoTool::SendEmail;
    let args: SendEmailArgs = parse(tool, arguments)?;
    if !args.to.contains('@') {
        return Err(format!("send_email: {:?} is not an email address", args.to));
    }
    // The id comes from the arguments, not a counter, so that a re-run or a
    // replay of the same call sees the same output.
    let mut hasher = Sha256::new();
    for part in [&args.to, &args.subject, &args.body] {
        hasher.update(part.as_bytes());
        hasher.update([0]);
    }
    let digest = hasher.finalize();
    let mut prefix = [0_u8; 8];
    prefix.copy_from_slice(&digest[..8]);
    let n = u64::from_be_bytes(prefix) % 1_000_000;
    structured(json!({
        "message_id": format!("msg-{n:06}"),
        "status": "queued",
        "to": args.to,
    }))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SearchPackagesArgs {
    query: Option<String>,
    q: Option<String>,
    #[serde(default = "default_limit")]
    limit: u64,
}

fn search_packages(arguments: JsonObject) -> Outcome {
    let tool = DemoTool::SearchPackages;
    let args: SearchPackagesArgs = parse(tool, arguments)?;
    let query = match (args.query, args.q) {
        (Some(query), None) | (None, Some(query)) => query,
        (None, None) => return Err("search_packages: missing field `query`".to_owned()),
        (Some(_), Some(_)) => {
            return Err("search_packages: give `query` or its alias `q`, not both".to_owned());
        }
    };
    at_most(tool, "limit", args.limit, MAX_LIMIT)?;
    let hits: Vec<Value> = data::search_packages(&query)
        .into_iter()
        .take(usize::try_from(args.limit).unwrap_or(usize::MAX))
        .map(|hit| {
            json!({
                "name": hit.package.name,
                "score": hit.score,
                "version": hit.package.version,
            })
        })
        .collect();
    structured(json!({
        "result": { "hits": hits },
        "count": hits.len(),
        "top_hit": hits.first(),
        "hits": hits,
    }))
}

fn known_package(tool: DemoTool, name: &str) -> Result<&'static data::Package, String> {
    data::package(name).ok_or_else(|| {
        format!(
            "{}: no package named {name:?} (search_packages lists them)",
            tool.name()
        )
    })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadmeArgs {
    package: String,
}

fn get_readme(arguments: JsonObject) -> Outcome {
    let tool = DemoTool::GetReadme;
    let args: ReadmeArgs = parse(tool, arguments)?;
    let package = known_package(tool, &args.package)?;
    structured(json!({ "package": package.name, "body": data::readme(package) }))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MetadataArgs {
    name: String,
}

fn fetch_metadata(arguments: JsonObject) -> Outcome {
    let tool = DemoTool::FetchMetadata;
    let args: MetadataArgs = parse(tool, arguments)?;
    let package = known_package(tool, &args.name)?;
    structured(json!({
        "name": package.name,
        "meta": {
            "version": package.version,
            "description": package.description,
            "license": package.license,
            "stars": package.stars,
            "downloads": package.downloads,
            "keywords": package.keywords,
            "homepage": format!("https://packages.example.com/{}", package.name),
        },
    }))
}

fn default_items() -> u64 {
    DEFAULT_ITEMS
}

fn default_item_prefix() -> String {
    DEFAULT_ITEM_PREFIX.to_owned()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListItemsArgs {
    #[serde(default = "default_items")]
    count: u64,
    #[serde(default = "default_item_prefix")]
    prefix: String,
}

fn list_items(arguments: JsonObject) -> Outcome {
    let tool = DemoTool::ListItems;
    let args: ListItemsArgs = parse(tool, arguments)?;
    at_most(tool, "count", args.count, MAX_ITEMS)?;
    let items: Vec<Value> = (0..args.count)
        .map(|index| json!({ "id": format!("{}{index}", args.prefix), "index": index }))
        .collect();
    text(Value::Array(items).to_string())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EchoArgs {
    message: String,
}

fn echo(arguments: JsonObject) -> Outcome {
    let args: EchoArgs = parse(DemoTool::Echo, arguments)?;
    text(args.message)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AddArgs {
    a: Number,
    b: Number,
}

fn add(arguments: JsonObject) -> Outcome {
    let args: AddArgs = parse(DemoTool::Add, arguments)?;
    let integer_sum = match (args.a.as_i64(), args.b.as_i64()) {
        (Some(a), Some(b)) => a.checked_add(b).map(Number::from),
        _ => None,
    };
    let sum = match integer_sum {
        Some(sum) => sum,
        None => {
            let (a, b) = (args.a.as_f64(), args.b.as_f64());
            a.zip(b)
                .and_then(|(a, b)| Number::from_f64(a + b))
                .ok_or_else(|| "add: the sum is not a finite number".to_owned())?
        }
    };
    structured(json!({ "sum": sum }))
}

fn default_failures() -> u64 {
    DEFAULT_FAILURES
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FlakyArgs {
    key: String,
    #[serde(default = "default_failures")]
    failures: u64,
}

fn flaky(state: &State, arguments: JsonObject) -> Outcome {
    let tool = DemoTool::Flaky;
    let args: FlakyArgs = parse(tool, arguments)?;
    at_most(tool, "failures", args.failures, MAX_FAILURES)?;
    let attempts = {
        let mut counters = state.flaky.lock().unwrap_or_else(PoisonError::into_inner);
        let counter = counters.entry(args.key.clone()).or_default();
        *counter += 1;
        *counter
    };
    if attempts <= args.failures {
        return Err(format!(
            "transient failure {attempts}/{} for key {:?}",
            args.failures, args.key
        ));
    }
    structured(json!({ "key": args.key, "attempts": attempts }))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SlowArgs {
    ms: u64,
}

async fn slow(arguments: JsonObject, ct: &CancellationToken) -> Outcome {
    let tool = DemoTool::Slow;
    let args: SlowArgs = parse(tool, arguments)?;
    at_most(tool, "ms", args.ms, MAX_SLOW_MS)?;
    tokio::select! {
        () = tokio::time::sleep(Duration::from_millis(args.ms)) => {
            structured(json!({ "slept_ms": args.ms }))
        }
        // Nobody reads this: the transport drops the answer to a cancelled
        // request. What matters is that the sleep stops.
        () = ct.cancelled() => Err(format!("slow: cancelled before {} ms were up", args.ms)),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BigOutputArgs {
    kb: u64,
}

fn big_output(arguments: JsonObject, written: Option<&Written>) -> Outcome {
    let tool = DemoTool::BigOutput;
    let args: BigOutputArgs = parse(tool, arguments)?;
    at_most(tool, "kb", args.kb, MAX_BIG_KB)?;
    if let Some(written) = written {
        return Ok(written.stand_in(big_output_text(args.kb)));
    }
    let records: Vec<Value> = (0..args.kb * 4).map(record).collect();
    structured(json!({ "kb": args.kb, "count": records.len(), "records": records }))
}

/// The `CallToolResult` of `big_output` as JSON text, built as text: what
/// [`structured`] of its records would serialise to, without their tree.
fn big_output_text(kb: u64) -> String {
    let count = kb * 4;
    let capacity = usize::try_from(count).unwrap_or(0) * (RECORD_BYTES + 1) + 64;
    let mut value = String::with_capacity(capacity);
    value.push_str(&format!("{{\"kb\":{kb},\"count\":{count},\"records\":["));
    for index in 0..count {
        if index > 0 {
            value.push(',');
        }
        // A record is three plain fields; its payload holds only letters
        // and spaces, so its text needs no escapes.
        value.push_str(&record(index).to_string());
    }
    value.push_str("]}");
    let text = serde_json::to_string(&value).unwrap_or_default();
    let mut result = String::with_capacity(text.len() + value.len() + 64);
    result.push_str("{\"content\":[{\"type\":\"text\",\"text\":");
    result.push_str(&text);
    drop(text);
    result.push_str("}],\"structuredContent\":");
    result.push_str(&value);
    result.push_str(",\"isError\":false}");
    result
}

/// Record `index` of `big_output`: exactly `RECORD_BYTES` of compact JSON.
fn record(index: u64) -> Value {
    const WORDS: [&str; 8] = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
    ];
    let id = format!("rec-{index:06}");
    let empty = json!({ "index": index, "id": id, "payload": "" });
    let room = RECORD_BYTES.saturating_sub(empty.to_string().len());
    let mut payload = String::with_capacity(room + 8);
    let start = usize::try_from(index).unwrap_or(0);
    for word in WORDS.iter().cycle().skip(start % WORDS.len()) {
        if payload.len() >= room {
            break;
        }
        payload.push_str(word);
        payload.push(' ');
    }
    payload.truncate(room);
    json!({ "index": index, "id": id, "payload": payload })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FailArgs {
    message: Option<String>,
    code: Option<String>,
    status: Option<u16>,
}

fn fail(arguments: JsonObject) -> Outcome {
    let args: FailArgs = parse(DemoTool::Fail, arguments)?;
    let message = args
        .message
        .unwrap_or_else(|| DEFAULT_FAIL_MESSAGE.to_owned());
    if args.code.is_none() && args.status.is_none() {
        return Err(message);
    }
    let mut error = serde_json::Map::new();
    if let Some(code) = args.code {
        error.insert("code".into(), code.into());
    }
    if let Some(status) = args.status {
        error.insert("status".into(), status.into());
    }
    error.insert("message".into(), message.into());
    Err(serde_json::json!({ "error": error }).to_string())
}

fn default_exit_code() -> i32 {
    DEFAULT_EXIT_CODE
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CrashArgs {
    #[serde(default = "default_exit_code")]
    exit_code: i32,
}

fn crash(arguments: JsonObject) -> Outcome {
    let args: CrashArgs = parse(DemoTool::Crash, arguments)?;
    if !(0..=255).contains(&args.exit_code) {
        return Err(format!(
            "crash: `exit_code` must be between 0 and 255, got {}",
            args.exit_code
        ));
    }
    eprintln!(
        "pipewright demo-server: the crash tool was called, exiting with status {}",
        args.exit_code
    );
    std::process::exit(args.exit_code)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SummarizeArgs {
    text: String,
}

fn summarize(arguments: JsonObject) -> Outcome {
    let args: SummarizeArgs = parse(DemoTool::Summarize, arguments)?;
    let words: Vec<&str> = args.text.split_whitespace().collect();
    let kept = &words[..words.len().min(SUMMARY_WORDS)];
    let mut summary = kept.join(" ");
    if words.len() > kept.len() {
        summary.push_str(" …");
    }
    let mut meta = MetaObject::new();
    meta.0
        .insert("pipewright/cost_usd".to_owned(), json!(SUMMARY_COST_USD));
    meta.0.insert(
        "pipewright/tokens".to_owned(),
        json!({ "input": words.len(), "output": kept.len() }),
    );
    meta.0
        .insert("pipewright/model".to_owned(), json!("demo-small"));
    structured(json!({ "summary": summary })).map(|result| result.with_meta(Some(meta)))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

fn call_counts(state: &State, arguments: JsonObject) -> Outcome {
    let _: NoArgs = parse(DemoTool::CallCounts, arguments)?;
    let counts: BTreeMap<&str, u64> = DemoTool::ALL
        .into_iter()
        .filter(|tool| *tool != DemoTool::CallCounts)
        .map(|tool| {
            (
                tool.name(),
                state.calls[tool as usize].load(Ordering::SeqCst),
            )
        })
        .collect();
    structured(json!({
        "counts": counts,
        "in_flight": state.in_flight.load(Ordering::SeqCst),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn run(state: &State, name: &str, arguments: Value) -> CallToolResult {
        let arguments = match arguments {
            Value::Object(map) => Some(map),
            _ => None,
        };
        call(state, name, arguments, &CancellationToken::new())
            .await
            .unwrap_or_else(|error| panic!("{name}: protocol error {error:?}"))
    }

    fn error_text(result: &CallToolResult) -> String {
        assert_eq!(result.is_error, Some(true), "{result:?}");
        result.content[0]
            .as_text()
            .map(|t| t.text.clone())
            .unwrap_or_default()
    }

    #[tokio::test]
    async fn unknown_tool_is_a_protocol_error() {
        let state = State::default();
        let error = call(&state, "get_sum", None, &CancellationToken::new()).await;
        assert!(error.is_err_and(|e| e.message.contains("unknown tool `get_sum`")));
    }

    #[tokio::test]
    async fn bad_arguments_are_tool_errors() {
        let state = State::default();
        let missing = run(&state, "search_users", json!({})).await;
        assert!(error_text(&missing).contains("missing field `query`"));
        let unknown = run(&state, "echo", json!({ "message": "x", "mesage": "y" })).await;
        assert!(error_text(&unknown).contains("unknown field `mesage`"));
        let too_big = run(&state, "list_items", json!({ "count": 1001 })).await;
        assert!(error_text(&too_big).contains("at most 1000"));
    }

    #[tokio::test]
    async fn search_packages_accepts_q_and_mirrors_hits() {
        let state = State::default();
        let result = run(&state, "search_packages", json!({ "q": "mcp", "limit": 2 })).await;
        let value = result.structured_content.unwrap_or_default();
        assert_eq!(value["count"], 2);
        assert_eq!(value["top_hit"]["name"], "mcp-kit");
        assert_eq!(value["hits"], value["result"]["hits"]);
        let none = run(&state, "search_packages", json!({ "query": "rubric" })).await;
        let value = none.structured_content.unwrap_or_default();
        assert_eq!(value["top_hit"], Value::Null);
        assert_eq!(value["hits"], json!([]));
        let both = run(&state, "search_packages", json!({ "query": "a", "q": "b" })).await;
        assert!(error_text(&both).contains("not both"));
    }

    #[tokio::test]
    async fn send_email_ids_depend_only_on_the_arguments() {
        let state = State::default();
        let args = json!({ "to": "a@example.com", "subject": "s", "body": "b" });
        let first = run(&state, "send_email", args.clone()).await;
        let second = run(&state, "send_email", args).await;
        assert_eq!(first, second);
        let id = first.structured_content.unwrap_or_default()["message_id"].clone();
        assert!(
            id.as_str()
                .is_some_and(|id| id.len() == 10 && id.starts_with("msg-"))
        );
        let bad = run(
            &state,
            "send_email",
            json!({ "to": "nobody", "subject": "", "body": "" }),
        )
        .await;
        assert!(error_text(&bad).contains("not an email address"));
    }

    #[tokio::test]
    async fn add_keeps_integers_integral() {
        let state = State::default();
        let sum =
            |result: CallToolResult| result.structured_content.unwrap_or_default()["sum"].clone();
        assert_eq!(
            sum(run(&state, "add", json!({ "a": 2, "b": 3 })).await),
            json!(5)
        );
        assert_eq!(
            sum(run(&state, "add", json!({ "a": 0.5, "b": 2 })).await),
            json!(2.5)
        );
        let big = json!({ "a": i64::MAX, "b": 1 });
        assert_eq!(
            sum(run(&state, "add", big).await),
            json!(9.223_372_036_854_776e18)
        );
    }

    #[test]
    fn big_output_records_are_exactly_sized() {
        for index in [0, 7, 99_999, 1_000_000] {
            assert_eq!(record(index).to_string().len(), RECORD_BYTES);
        }
    }

    #[tokio::test]
    async fn big_output_is_about_kb_kib() {
        let state = State::default();
        let result = run(&state, "big_output", json!({ "kb": 64 })).await;
        let value = result.structured_content.unwrap_or_default();
        let size = value["records"].to_string().len();
        assert!((64 * 1024..=66 * 1024).contains(&size), "{size}");
        assert_eq!(value["count"], 256);
    }

    #[test]
    fn big_output_written_as_text_is_what_its_tree_serialises_to() {
        for kb in [0, 1, 3] {
            let Ok(mut tree) = big_output(JsonObject::from_iter([("kb".into(), json!(kb))]), None)
            else {
                panic!("big_output failed");
            };
            tree.result_type = None;
            assert_eq!(
                big_output_text(kb),
                serde_json::to_string(&tree).unwrap_or_default(),
                "kb {kb}"
            );
        }
    }

    #[tokio::test]
    async fn summarize_reports_cost_and_tokens_in_meta() {
        let state = State::default();
        let text = "one two three four five six seven eight nine ten eleven twelve thirteen";
        let result = run(&state, "summarize", json!({ "text": text })).await;
        let meta = result.meta.clone().unwrap_or_default().0;
        assert_eq!(meta["pipewright/cost_usd"], json!(0.002));
        assert_eq!(
            meta["pipewright/tokens"],
            json!({ "input": 13, "output": 12 })
        );
        assert_eq!(meta["pipewright/model"], "demo-small");
        let summary = result.structured_content.unwrap_or_default()["summary"].clone();
        assert_eq!(
            summary,
            "one two three four five six seven eight nine ten eleven twelve …"
        );
    }

    #[tokio::test]
    async fn call_counts_lists_every_other_tool() {
        let state = State::default();
        run(&state, "echo", json!({ "message": "hi" })).await;
        run(&state, "echo", json!({})).await;
        let result = run(&state, "call_counts", json!({})).await;
        let value = result.structured_content.unwrap_or_default();
        assert_eq!(value["counts"]["echo"], 2);
        assert_eq!(value["counts"]["add"], 0);
        assert!(value["counts"].get("call_counts").is_none());
        assert_eq!(
            value["counts"].as_object().map(|m| m.len()),
            Some(DemoTool::ALL.len() - 1)
        );
        assert_eq!(value["in_flight"], 0);
    }

    #[tokio::test]
    async fn slow_stops_when_cancelled() {
        let state = State::default();
        let ct = CancellationToken::new();
        let args = json!({ "ms": 60_000 }).as_object().cloned();
        let canceller = ct.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            canceller.cancel();
        });
        let started = std::time::Instant::now();
        let result = call(&state, "slow", args, &ct).await;
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(result.is_ok_and(|r| r.is_error == Some(true)));
        assert_eq!(state.in_flight.load(Ordering::SeqCst), 0);
    }
}
