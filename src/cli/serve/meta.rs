//! `run_pipeline` (`serve --meta-tool`): an inline pipeline, native or Fibe
//! or Discord, run against the served files' upstream servers. Preflight
//! runs first; destructive tools still need `serve --yes`.

use rmcp::model::CallToolResponse;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::{Map, Value};

use super::handler::{PipelineServer, run};
use crate::engine::run::session::SessionConfig;

pub(super) async fn call(
    server: &PipelineServer,
    args: Map<String, Value>,
    context: RequestContext<RoleServer>,
) -> Result<CallToolResponse, ErrorData> {
    let Some(Value::String(text)) = args.get("pipeline") else {
        return Err(ErrorData::invalid_params(
            "`run_pipeline` needs `pipeline`: the pipeline file's text",
            None,
        ));
    };
    let vars = match args.get("vars") {
        None => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(_) => {
            return Err(ErrorData::invalid_params(
                "`vars` must be an object of `${var.X}` values",
                None,
            ));
        }
    };
    let Some(up) = server.upstream() else {
        return Err(ErrorData::invalid_params(
            "no upstream servers are connected",
            None,
        ));
    };
    let loaded = crate::engine::file::open::load_str(text);
    let errors: Vec<String> = loaded
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| format!("{}:{}: {}", d.span.start.line, d.span.start.col, d.message))
        .collect();
    let Some(pipeline) = loaded.pipeline.filter(|_| errors.is_empty()) else {
        return Err(ErrorData::invalid_params(
            format!("the pipeline has errors: {}", errors.join("; ")),
            None,
        ));
    };
    let Some(comp) = pipeline.compositions.first().cloned() else {
        return Err(ErrorData::invalid_params(
            "the pipeline has no composition",
            None,
        ));
    };
    let mut all = pipeline.vars.clone();
    all.extend(vars);
    let default = up.pricing.default_server.clone();
    let report = crate::engine::plan::preflight::check(
        &[(&comp, all.clone())],
        &up.tools,
        default.as_deref(),
    );
    if !report.ok() {
        let problems: Vec<String> = report.problems.iter().map(|d| d.message.clone()).collect();
        return Err(ErrorData::invalid_params(
            format!("preflight: {}", problems.join("; ")),
            None,
        ));
    }
    if !report.destructive.is_empty() && !server.allows_destructive() {
        let calls: Vec<String> = report.destructive.iter().map(|d| d.tool.clone()).collect();
        return Err(ErrorData::invalid_params(
            format!(
                "the pipeline calls destructive tools ({}); this server was not started with --yes",
                calls.join(", ")
            ),
            None,
        ));
    }
    let cfg = SessionConfig {
        file: "run_pipeline".into(),
        vars: all,
        budget: comp.budget.or(pipeline.budget),
        pricing: up.pricing.clone(),
        expect: comp.expect.clone(),
        ..SessionConfig::default()
    };
    let caller = up.pool.clone() as std::sync::Arc<dyn crate::engine::mcp::caller::Caller>;
    let trace = run(std::sync::Arc::new(comp), caller, cfg, &context).await;
    Ok(server.answer(trace))
}
