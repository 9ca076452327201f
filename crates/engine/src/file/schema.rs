//! The pipeline file format as plain serde types, for the JSON Schema that
//! `pipewright schema` prints (`schema/pipewright.schema.json`) and editors
//! use to complete and validate files. The loader does not read these types
//! (it works on the spanned tree to report positions); `tests/schema.rs`
//! keeps the two in step: every object's keys against the loader's tables
//! in `keys.rs`, and files each side accepts or rejects.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use crate::file::protocol::Protocol;

/// A pipewright pipeline file: a linear `pipe:` and/or DAG `compositions:`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "pipewright pipeline file")]
pub struct PipelineFile {
    /// File format version; only 1 exists.
    #[schemars(range(min = 1, max = 1))]
    pub version: Option<u64>,
    /// Name of the `pipe:` composition (default `pipe`).
    pub name: Option<String>,
    pub description: Option<String>,
    /// Servers nodes call, by name. With one, nodes need not name it.
    pub servers: Option<BTreeMap<String, ServerEntry>>,
    /// Defaults for `${var.NAME}`; `--var` and case rows win.
    pub vars: Option<BTreeMap<String, Value>>,
    pub budget: Option<BudgetEntry>,
    /// An inline pricing table: `tools: {name: {cost_usd}}`, `models: {name: {input_per_mtok, output_per_mtok}}`.
    pub pricing: Option<BTreeMap<String, Value>>,
    /// Plan only: `run` checks references and arguments and calls nothing
    /// (Fibe's `dry_run`).
    pub dry_run: Option<bool>,
    /// How a tool changed since `pipewright.lock` is reported: `warn`
    /// (the default) or `strict`, an error before any call (as `--locked`).
    pub lock: Option<LockMode>,
    /// An OpenAI-compatible chat-completions endpoint that answers the
    /// servers' sampling requests when no person does.
    pub sampling: Option<SamplingEntry>,
    /// A linear pipeline: step k runs after step k-1.
    pub pipe: Option<Vec<PipeStepEntry>>,
    /// DAGs of nodes wired by `needs`.
    pub compositions: Option<Vec<CompositionEntry>>,
    /// The `pipe:`'s output.
    pub output: Option<OutputEntry>,
    /// Assertions over the `pipe:`'s trace envelope.
    pub expect: Option<Vec<ExpectEntry>>,
    /// Dataset rows the `pipe:` runs once each.
    pub cases: Option<Vec<CaseEntry>>,
    /// mcptest sections pipewright does not run (ignored with a warning).
    pub agents: Option<Value>,
    pub tools: Option<Value>,
    pub evals: Option<Value>,
    pub eval: Option<Value>,
    pub resources: Option<Value>,
    pub prompts: Option<Value>,
}

/// mcptest's judged metrics, each with its own settings, graded after a
/// run by an LLM judge (deferred when none is configured).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EvalEntry {
    /// The judge: an OpenAI-compatible chat-completions endpoint.
    pub provider: Option<JudgeProvider>,
    /// The output graded against weighted criteria or a decision tree.
    pub rubric: Option<RubricEntry>,
    /// Whether the output accomplishes the task.
    pub mcp_task_completion: Option<TaskCompletionEntry>,
    /// Whether the tools called were the right ones.
    pub mcp_use: Option<McpUseEntry>,
    /// Whether each call's arguments were right (checked against the
    /// tool's inputSchema first).
    pub argument_correctness: Option<ThresholdEntry>,
    /// Whether the DAG is a good plan for the task.
    pub plan_quality: Option<ThresholdEntry>,
}

/// The judge of `eval:`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JudgeProvider {
    /// The chat-completions URL, or the API's base URL (`/chat/completions` is added).
    pub url: String,
    pub model: String,
    /// A bearer token, only as `${env.NAME}`.
    #[schemars(extend("pattern" = "^\\$\\{env\\.[A-Za-z_][A-Za-z0-9_]*\\}$"))]
    pub api_key: Option<String>,
    /// One request's timeout (default 60s).
    pub timeout: Option<DurationEntry>,
    /// The most tokens one reply may take (default 1024).
    pub max_tokens: Option<u64>,
    /// Default 0.
    pub temperature: Option<f64>,
    /// How often a 429 or 5xx is tried again (default 2).
    pub retries: Option<u64>,
}

/// A score from 0 to 1.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct Score(#[schemars(range(min = 0.0, max = 1.0))] pub f64);

/// A metric with only a pass mark.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ThresholdEntry {
    /// A score at or above it passes (default 0.5).
    pub threshold: Option<Score>,
}

/// `mcp_task_completion`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskCompletionEntry {
    pub threshold: Option<Score>,
    /// The task, when the composition's `description` does not say it.
    pub task: Option<String>,
}

/// `mcp_use`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct McpUseEntry {
    pub threshold: Option<Score>,
    /// Tools the run must call (checked without a model).
    pub expect: Option<Vec<String>>,
}

/// `rubric`: weighted `criteria` or a decision `tree`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RubricEntry {
    pub threshold: Option<Score>,
    pub criteria: Option<Vec<CriterionItem>>,
    pub tree: Option<TreeNodeEntry>,
}

/// A criterion: a name (weight 1) or a mapping.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum CriterionItem {
    Name(String),
    Full(CriterionEntry),
}

/// A criterion with its weight.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CriterionEntry {
    pub name: String,
    /// Default 1.
    pub weight: Option<f64>,
    pub description: Option<String>,
}

/// A decision tree's node: a `question` and its `options`, or a leaf
/// `score` (and `label`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TreeNodeEntry {
    pub question: Option<String>,
    /// Each answer and where it leads.
    pub options: Option<BTreeMap<String, TreeBranch>>,
    pub score: Option<Score>,
    pub label: Option<String>,
}

/// Where an answer leads: another node, or a bare score.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum TreeBranch {
    Score(Score),
    Node(Box<TreeNodeEntry>),
}

/// A server: a URL or a command line as a string, or a mapping.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ServerEntry {
    /// `http(s)://…` for Streamable HTTP, anything else a command line.
    Short(String),
    Full(ServerObject),
}

/// A server mapping: exactly one of `url`, `command` or `from`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServerObject {
    /// Streamable HTTP endpoint.
    pub url: Option<String>,
    /// HTTP headers; values are secrets (masked in traces).
    pub headers: Option<BTreeMap<String, String>>,
    /// Program to start; it speaks MCP over stdio.
    pub command: Option<String>,
    pub args: Option<Vec<String>>,
    pub env: Option<BTreeMap<String, String>>,
    pub cwd: Option<String>,
    /// A client config file (Claude Desktop, Cursor, `.mcp.json`, VS Code `mcp.json`) to take the server from.
    pub from: Option<String>,
    /// The entry of `from` to use (default: this server's name).
    pub name: Option<String>,
    pub transport: Option<Transport>,
    /// How pipewright identifies itself to the server's OAuth authorization server.
    pub auth: Option<Box<AuthEntry>>,
    /// The MCP revision to speak to this server (default: `--protocol`, else `auto`: `initialize` first, `server/discover` for a server that refuses it).
    pub protocol: Option<ProtocolEntry>,
}

/// An MCP revision pipewright can be told to speak: one of
/// [`Protocol::ALL`]'s names, which the schema lists.
#[derive(Debug, Deserialize)]
#[serde(try_from = "String")]
pub struct ProtocolEntry(pub Protocol);

impl TryFrom<String> for ProtocolEntry {
    type Error = String;

    fn try_from(name: String) -> Result<Self, String> {
        Protocol::parse(&name)
            .map(ProtocolEntry)
            .ok_or_else(|| format!("`{name}` is not one of {}", Protocol::listed()))
    }
}

impl JsonSchema for ProtocolEntry {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "ProtocolEntry".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let names: Vec<&str> = Protocol::ALL.iter().map(|p| p.name()).collect();
        schemars::json_schema!({
            "description": "An MCP revision pipewright can be told to speak.",
            "type": "string",
            "enum": names,
        })
    }
}

/// OAuth client settings of an HTTP server.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AuthEntry {
    /// A client id registered with the authorization server out of band.
    pub client_id: Option<String>,
    /// Its secret, as a `${env.X}` reference.
    pub client_secret: Option<String>,
    /// The https URL of a Client ID Metadata Document you host.
    pub client_id_url: Option<String>,
    /// DPoP (RFC 9449): `auto` binds tokens to a proof key when the authorization server supports it (the default), `required` always, `off` never.
    pub dpop: Option<Dpop>,
    /// `authorization_code` (a browser login, the default), `client_credentials` (no user, for CI), `jwt_bearer` (a workload's JWT, for CI and cloud runners) or `id_jag` (an enterprise identity provider's grant for the user's ID token).
    pub grant: Option<Grant>,
    /// A PEM private key (EC P-256 or RSA) for `private_key_jwt`, as a `${env.X}` reference.
    pub private_key: Option<String>,
    /// Scopes to ask for (default: what the server names).
    pub scopes: Option<Vec<String>>,
    /// `grant: jwt_bearer`: the workload's JWT (workload identity federation).
    pub assertion: Option<AssertionEntry>,
    /// `grant: id_jag`: the enterprise identity provider that trades the user's ID token for an ID-JAG.
    pub identity_provider: Option<IdentityProviderEntry>,
}

/// An assertion: a `${env.X}` reference, or where to read it afresh for each token request.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum AssertionEntry {
    /// A `${env.X}` reference.
    Reference(String),
    Source(AssertionSourceEntry),
}

/// Where an assertion is read for each token request: exactly one of `file` or `command`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AssertionSourceEntry {
    /// A file holding it (a projected service account token, a runner's token file).
    pub file: Option<String>,
    /// A program (and its arguments) that prints it.
    pub command: Option<StringOrList>,
}

/// A string, or a list of strings.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum StringOrList {
    One(String),
    Many(Vec<String>),
}

/// The enterprise identity provider of `grant: id_jag`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IdentityProviderEntry {
    /// Its issuer (its token endpoint is read from its metadata).
    pub issuer: Option<String>,
    /// Its token endpoint, where the ID token is exchanged (RFC 8693).
    pub token_endpoint: Option<String>,
    /// pipewright's client id at the identity provider.
    pub client_id: String,
    /// Its secret there, as a `${env.X}` reference.
    pub client_secret: Option<String>,
    /// The user's ID token.
    pub id_token: AssertionEntry,
}

/// How strictly the lock is held.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LockMode {
    Warn,
    Strict,
}

/// When tokens are bound to a proof key (DPoP).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Dpop {
    Auto,
    Required,
    Off,
}

/// The OAuth grant pipewright uses.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Grant {
    AuthorizationCode,
    ClientCredentials,
    JwtBearer,
    IdJag,
}

/// How to reach the server (implied by `url` / `command`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    Stdio,
    Http,
    #[serde(rename = "streamable-http")]
    StreamableHttpDash,
    StreamableHttp,
    Sse,
}

/// Caps on a run.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BudgetEntry {
    pub max_cost_usd: Option<f64>,
    pub max_tokens: Option<u64>,
    pub max_duration: Option<DurationEntry>,
    pub max_duration_ms: Option<u64>,
    /// Fan-out iterations the whole run may make; a `for_each` that would
    /// go past it fails before its first call.
    pub max_iterations: Option<u64>,
}

/// A duration: `500ms`, `30s`, `2m`, `1h`, `1m30s`, or a number of seconds.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum DurationEntry {
    Seconds(u64),
    Text(String),
}

/// One composition: a DAG of nodes.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompositionEntry {
    pub name: String,
    pub description: Option<String>,
    pub nodes: Vec<NodeEntry>,
    pub output: Option<OutputEntry>,
    pub expect: Option<Vec<ExpectEntry>>,
    pub cases: Option<Vec<CaseEntry>>,
    pub budget: Option<BudgetEntry>,
    /// mcptest's judged metrics, graded by an LLM judge after the run;
    /// deferred when no judge is configured.
    pub eval: Option<EvalEntry>,
}

/// One MCP call of a composition.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodeEntry {
    /// Unique id, read by others as `${id.path}`.
    pub id: String,
    /// Parents: one id or a list.
    pub needs: Option<NeedsEntry>,
    #[serde(flatten)]
    pub call: CallFields,
}

/// One step of a `pipe:`: a node without `needs`, since steps run in order.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PipeStepEntry {
    /// Unique id, read by others as `${id.path}`.
    pub id: String,
    #[serde(flatten)]
    pub call: CallFields,
}

/// What a node and a pipe step share: the call and everything around it.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct CallFields {
    /// The server to call (required when several are declared).
    pub server: Option<String>,
    /// The tool (may be left out when `mock:` answers instead).
    pub tool: Option<String>,
    /// Arguments; strings may hold `${…}` references.
    pub args: Option<BTreeMap<String, Value>>,
    /// jq applied to the output.
    pub transform: Option<JqEntry>,
    /// A guard: `${ref} | jq-filter`, or a jq predicate over `{parents}`.
    pub when: Option<WhenEntry>,
    pub on_error: Option<OnErrorEntry>,
    /// Fan out over an array: `${parent}`, `${parent[*]}`, `${parent.items}`.
    pub for_each: Option<String>,
    /// Parents that fanned out over the same list: in each iteration,
    /// `${parent}` reads the parent's output for the same element.
    pub aligned: Option<Vec<String>>,
    pub max_concurrency: Option<u64>,
    pub mock: Option<MockEntry>,
    pub timeout: Option<DurationEntry>,
    /// Call the tool as an MCP task (`true`), never (`false`), or as the
    /// tool's `execution.taskSupport` and `timeout` say (unset).
    pub task: Option<TaskEntry>,
    pub max_cost_per_call_usd: Option<f64>,
    pub max_tokens_per_call: Option<u64>,
    /// Undo call run when the run fails after this node completed.
    pub compensate: Option<CompensateEntry>,
    /// Extra request `_meta` fields sent with the call.
    pub meta: Option<BTreeMap<String, Value>>,
    /// Replies to the server's questions during the call, in order: used
    /// after `--answers` entries and before asking a person.
    pub answers: Option<Vec<AnswerEntry>>,
    pub description: Option<String>,
}

/// One reply: `accept`, `decline`, `cancel`, `{accept: {fields}}` or
/// `{sample: TEXT | {text, model}}`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum AnswerEntry {
    Word(AnswerWord),
    Object(AnswerObject),
}

/// A reply in one word.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AnswerWord {
    Accept,
    Decline,
    Cancel,
}

/// `{accept: {fields}}` or `{sample: …}`: exactly one key.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("minProperties" = 1, "maxProperties" = 1))]
pub struct AnswerObject {
    /// The form's fields (nothing: its defaults, or a URL question done).
    pub accept: Option<BTreeMap<String, Value>>,
    /// A sampling reply: the model's text (model `human`), or `{text, model}`.
    pub sample: Option<SampleEntry>,
}

/// A sampling reply's text, or `{text, model}`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum SampleEntry {
    Text(String),
    Full(SampleObject),
}

/// `{text, model}`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SampleObject {
    pub text: String,
    pub model: Option<String>,
}

/// `task:` as true, false or `auto`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum TaskEntry {
    Flag(bool),
    Auto(TaskAuto),
}

/// `auto`: as the tool's `execution.taskSupport` and the node's `timeout` say.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TaskAuto {
    Auto,
}

/// `needs:` as one id or a list of ids.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum NeedsEntry {
    One(String),
    Many(Vec<String>),
}

/// `when:` as a guard expression, or a constant `true`/`false`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum WhenEntry {
    Text(String),
    Constant(bool),
}

/// A jq program, as a string or `{jq: …}`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum JqEntry {
    Text(String),
    Object(JqObject),
}

/// `{jq: program}`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JqObject {
    pub jq: String,
}

/// `stop`, `continue`, `retry:<n>`, or `{retry: n}` / `{retry: {max, backoff}}`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum OnErrorEntry {
    Text(OnErrorText),
    Retry(RetryObject),
}

/// `stop`, `continue` or `retry:<n>`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(transparent)]
#[schemars(extend("pattern" = "^(stop|continue|retry:[0-9]+)$"))]
pub struct OnErrorText(pub String);

/// `{retry: …}`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetryObject {
    pub retry: RetryEntry,
}

/// A retry count, or `{max, backoff}`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum RetryEntry {
    Count(u64),
    Full(RetryFull),
}

/// `{max, backoff}`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RetryFull {
    pub max: u64,
    pub backoff: Option<DurationEntry>,
}

/// A fixture instead of the call: `{result: …}` or `{error: …}`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MockEntry {
    pub result: Option<Value>,
    pub error: Option<Value>,
}

/// An undo call.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompensateEntry {
    pub server: Option<String>,
    pub tool: String,
    pub args: Option<BTreeMap<String, Value>>,
}

/// A node id, or `{assemble: jq}` over `{nodes: {id: output}}`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum OutputEntry {
    Node(String),
    Assemble(AssembleObject),
}

/// `{assemble: jq}`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AssembleObject {
    pub assemble: String,
}

/// An assertion over the trace envelope.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExpectEntry {
    /// `composition.…`, `output…`, `nodes.<id>.…`, `cost.total`, `tokens.total`.
    pub target: String,
    pub matcher: MatcherEntry,
}

/// Exactly one matcher.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(extend("minProperties" = 1, "maxProperties" = 1))]
pub struct MatcherEntry {
    pub exact: Option<Value>,
    pub lte: Option<f64>,
    pub lt: Option<f64>,
    pub gte: Option<f64>,
    pub gt: Option<f64>,
    pub contains: Option<Value>,
    pub regex: Option<String>,
    pub length: Option<u64>,
    #[serde(rename = "type")]
    pub type_: Option<JsonTypeName>,
    pub exists: Option<bool>,
    pub jq: Option<String>,
}

/// A JSON type name for the `type` matcher.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum JsonTypeName {
    Null,
    Boolean,
    Number,
    String,
    Array,
    Object,
}

/// One dataset row.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CaseEntry {
    pub name: String,
    pub vars: Option<BTreeMap<String, Value>>,
    pub golden: Option<Value>,
    pub expect: Option<Vec<ExpectEntry>>,
}

/// The JSON Schema of the pipeline file, pretty-printed with a final newline.
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(PipelineFile);
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}

/// Where servers' sampling requests go when no person answers them.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SamplingEntry {
    /// The chat-completions URL, or the API's base URL (`/chat/completions` is added).
    pub url: String,
    /// The model to ask.
    pub model: String,
    /// Sent as a bearer token; use `${env.NAME}` (it is masked everywhere).
    pub api_key: Option<String>,
}
