//! The file format's keys, one table per kind of mapping. The loader
//! accepts exactly these keys (anything else is an "unknown key" error with
//! a suggestion), and a test compares every table with the JSON Schema that
//! `pipewright schema` prints, object by object, so the two cannot drift.

/// The top level of a pipeline file.
pub const TOP_KEYS: &[&str] = &[
    "version",
    "name",
    "description",
    "servers",
    "vars",
    "budget",
    "pricing",
    "dry_run",
    "lock",
    "sampling",
    "pipe",
    "compositions",
    "output",
    "expect",
    "cases",
];
/// Sections of an mcptest suite that pipewright does not run; loading such a
/// suite warns instead of failing.
pub const MCPTEST_SECTIONS: &[&str] = &["agents", "tools", "evals", "eval", "resources", "prompts"];
/// The judged metrics of mcptest's `eval:` block.
pub const EVAL_METRICS: &[&str] = &[
    "rubric",
    "mcp_task_completion",
    "mcp_use",
    "argument_correctness",
    "plan_quality",
];
/// A composition's `eval:` block: the metrics and the judge `provider`.
pub const EVAL_KEYS: &[&str] = &[
    "provider",
    "rubric",
    "mcp_task_completion",
    "mcp_use",
    "argument_correctness",
    "plan_quality",
];
/// `eval.provider:` (and `judge:` in the user's config.yaml).
pub const JUDGE_KEYS: &[&str] = &[
    "url",
    "model",
    "api_key",
    "timeout",
    "max_tokens",
    "temperature",
    "retries",
];
/// `eval.rubric:`.
pub const RUBRIC_KEYS: &[&str] = &["threshold", "criteria", "tree"];
/// One criterion of `eval.rubric.criteria` written as a mapping.
pub const CRITERION_KEYS: &[&str] = &["name", "weight", "description"];
/// A node of `eval.rubric.tree`: a question with its options, or a leaf.
pub const TREE_KEYS: &[&str] = &["question", "options", "score", "label"];
/// `eval.mcp_task_completion:`.
pub const TASK_COMPLETION_KEYS: &[&str] = &["threshold", "task"];
/// `eval.mcp_use:`.
pub const MCP_USE_KEYS: &[&str] = &["threshold", "expect"];
/// `eval.argument_correctness:` and `eval.plan_quality:`.
pub const THRESHOLD_KEYS: &[&str] = &["threshold"];
pub const COMPOSITION_KEYS: &[&str] = &[
    "name",
    "description",
    "nodes",
    "output",
    "expect",
    "cases",
    "budget",
    "eval",
];
pub const NODE_KEYS: &[&str] = &[
    "id",
    "needs",
    "server",
    "tool",
    "args",
    "transform",
    "when",
    "on_error",
    "for_each",
    "aligned",
    "max_concurrency",
    "mock",
    "timeout",
    "task",
    "max_cost_per_call_usd",
    "max_tokens_per_call",
    "compensate",
    "meta",
    "answers",
    "description",
];
pub const SERVER_KEYS: &[&str] = &[
    "url",
    "headers",
    "command",
    "args",
    "env",
    "cwd",
    "from",
    "name",
    "transport",
    "auth",
    "protocol",
];
pub const AUTH_KEYS: &[&str] = &[
    "client_id",
    "client_secret",
    "client_id_url",
    "dpop",
    "grant",
    "private_key",
    "scopes",
    "assertion",
    "identity_provider",
];
/// `auth.identity_provider` (`grant: id_jag`).
pub const IDENTITY_PROVIDER_KEYS: &[&str] = &[
    "issuer",
    "token_endpoint",
    "client_id",
    "client_secret",
    "id_token",
];
/// An assertion (`auth.assertion`, `identity_provider.id_token`) given as a
/// mapping rather than a `${env.X}` reference.
pub const ASSERTION_SOURCE_KEYS: &[&str] = &["file", "command"];
pub const BUDGET_KEYS: &[&str] = &[
    "max_cost_usd",
    "max_tokens",
    "max_duration",
    "max_duration_ms",
    "max_iterations",
];
pub const MATCHERS: &[&str] = &[
    "exact", "lte", "lt", "gte", "gt", "contains", "regex", "length", "type", "exists", "jq",
];
/// `output:` as an object.
pub const OUTPUT_KEYS: &[&str] = &["assemble"];

/// Keys of `sampling:`.
pub const SAMPLING_KEYS: &[&str] = &["url", "model", "api_key"];
/// One entry of `expect:`.
pub const EXPECTATION_KEYS: &[&str] = &["target", "matcher"];
/// One row of `cases:`.
pub const CASE_KEYS: &[&str] = &["name", "vars", "golden", "expect"];
/// `transform:` as an object.
pub const TRANSFORM_KEYS: &[&str] = &["jq"];
/// `on_error:` as an object.
pub const ON_ERROR_KEYS: &[&str] = &["retry"];
/// `on_error.retry:` as an object.
pub const RETRY_KEYS: &[&str] = &["max", "backoff"];
/// A node's `mock:`.
pub const MOCK_KEYS: &[&str] = &["result", "error"];
/// An entry of a node's `answers:` written as a mapping (one key).
pub const ANSWER_KEYS: &[&str] = &["accept", "sample"];
/// `sample:` written as a mapping.
pub const SAMPLE_KEYS: &[&str] = &["text", "model"];
/// A node's `compensate:`.
pub const COMPENSATE_KEYS: &[&str] = &["server", "tool", "args"];

/// A step of a `pipe:`: a node's keys but `needs`, since steps run in order
/// (the loader says so when it meets `needs` there).
pub fn pipe_step_keys() -> Vec<&'static str> {
    NODE_KEYS
        .iter()
        .copied()
        .filter(|k| *k != "needs")
        .collect()
}
