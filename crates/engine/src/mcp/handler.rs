//! pipewright's side of the conversation: what it answers when a server asks
//! it something (roots, and — through the call's [`Responder`] — forms,
//! URLs and model completions), and what it keeps of the server's
//! notifications (logs, progress, a changed tool list).
// Roots, sampling and logging are deprecated by SEP-2577 but are what the
// servers in use today speak; pipewright keeps answering them.
#![expect(
    deprecated,
    reason = "roots/sampling/logging are still spoken by servers today"
)]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::{
    ClientHandler,
    model::{
        ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
        ElicitRequestParams, ElicitResult, ElicitationCapability, ErrorCode, ErrorData,
        FormElicitationCapability, Implementation, ListRootsResult,
        LoggingMessageNotificationParam, ProgressNotificationParam, ProtocolVersion, RequestId,
        RequestMetaObject, RootsCapabilities, SamplingCapability, TASKS_EXTENSION_ID,
        UrlElicitationCapability,
    },
    service::{InboundStreamOrigin, NotificationContext, RequestContext, RoleClient},
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::human::{
    Answer, Ask, Interaction, LogLine, Nobody, ProgressNote, Question, Reply, Responder, Source,
    check_reply, with_defaults,
};
use super::inflight::InFlight;
use super::{log::ServerLog, roots::Root};

/// The client handler given to rmcp for one connection.
pub(crate) struct Client {
    config: ClientConfig,
    name: String,
    roots: Vec<Root>,
    log: ServerLog,
    calls: InFlight,
    /// Set by `notifications/tools/list_changed`; cleared by the re-read.
    tools_changed: Arc<AtomicBool>,
}

impl Client {
    pub(crate) fn new(
        server: &str,
        (name, version): (&str, &str),
        roots: Vec<Root>,
        log: ServerLog,
        calls: InFlight,
        tools_changed: Arc<AtomicBool>,
    ) -> Self {
        let mut capabilities = ClientCapabilities::default();
        capabilities.roots = Some(RootsCapabilities::default());
        capabilities.sampling = Some(SamplingCapability::default());
        capabilities.elicitation = Some(
            ElicitationCapability::new()
                .with_form(FormElicitationCapability::new())
                .with_url(UrlElicitationCapability::new()),
        );
        // The 2026-07-28 Tasks extension (SEP-2663): pipewright follows a
        // task handle to its result (`super::task`).
        capabilities
            .extensions
            .get_or_insert_default()
            .insert(TASKS_EXTENSION_ID.to_owned(), Default::default());
        let config = ClientConfig::new(capabilities, Implementation::new(name, version))
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE);
        Self {
            config,
            name: server.to_owned(),
            roots,
            log,
            calls,
            tools_changed,
        }
    }

    /// Finds who answers, asks, checks the reply and keeps the exchange.
    /// `stop` fires when the server cancels its request.
    async fn ask(&self, ask: Ask, context: &RequestContext<RoleClient>) -> Reply {
        let origin = origin(&context.extensions);
        let task = related_task(&context.meta);
        let stop = context.ct.clone();
        let filing = self.calls.asker(origin.as_ref(), task.as_deref());
        let (filed, scope, done) = match &filing {
            Some(f) => (Some(f.id), Some(&f.scope), f.withdrawn.clone()),
            None => (None, None, CancellationToken::new()),
        };
        let question = Question {
            server: self.name.clone(),
            node: scope.and_then(|s| s.node.clone()),
            candidates: filing
                .as_ref()
                .map(|f| f.candidates.clone())
                .unwrap_or_default(),
            ask,
        };
        let responder: Arc<dyn Responder> = scope
            .and_then(|s| s.responder.clone())
            .unwrap_or_else(|| Arc::new(Nobody));
        // The call it belongs to ending (timed out, cancelled; for a
        // question that named no call: every call that may have asked it)
        // or the server cancelling its request takes the question with it.
        let mut answer: Answer = tokio::select! {
            a = responder.respond(&question) => a,
            () = done.cancelled() => Answer {
                reply: Reply::Cancel,
                by: Source::Nobody,
                error: Some("the call ended before the question was answered".to_owned()),
            },
            () = stop.cancelled() => Answer {
                reply: Reply::Cancel,
                by: Source::Nobody,
                error: Some("the server withdrew the question".to_owned()),
            },
        };
        if let (Ask::Form { schema, .. }, Reply::Accept(content)) =
            (&question.ask, &mut answer.reply)
        {
            with_defaults(schema, content);
        }
        if let Err(e) = check_reply(&question.ask, &answer.reply) {
            answer.error = Some(e);
            answer.reply = Reply::Cancel;
        }
        let who = question.node.as_deref().unwrap_or("no node");
        self.log.push(&format!(
            "[pipewright] {} for {who}: {}",
            question.ask.kind(),
            answer.reply.action()
        ));
        let interaction = Interaction {
            kind: question.ask.kind().to_owned(),
            server: self.name.clone(),
            request: question.ask.request_json(),
            reply: answer.reply.json(),
            by: answer.by,
            error: answer.error,
        };
        if let Some(filed) = filed {
            self.calls.answered(filed, interaction);
        }
        answer.reply
    }
}

/// The task a server's request is about: the `taskId` of its
/// `io.modelcontextprotocol/related-task` `_meta`.
fn related_task(meta: &RequestMetaObject) -> Option<String> {
    meta.0
        .0
        .get(super::task::RELATED_TASK)?
        .get("taskId")?
        .as_str()
        .map(str::to_owned)
}

/// The call an inbound message came with, when the transport knows.
fn origin(extensions: &rmcp::model::Extensions) -> Option<RequestId> {
    match extensions.get::<InboundStreamOrigin>() {
        Some(InboundStreamOrigin::OutboundRequest(id)) => Some(id.clone()),
        _ => None,
    }
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let roots = self
            .roots
            .iter()
            .map(|root| {
                let r = rmcp::model::Root::new(root.uri.clone());
                match &root.name {
                    Some(name) => r.with_name(name.clone()),
                    None => r,
                }
            })
            .collect();
        Ok(ListRootsResult::new(roots))
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let mut request = serde_json::to_value(&params).unwrap_or(Value::Null);
        if let Some(map) = request.as_object_mut() {
            map.remove("_meta");
        }
        let reply = self.ask(Ask::Sample { request }, &context).await;
        match reply {
            Reply::Sampled { .. } => serde_json::from_value(reply.json()).map_err(|e| {
                ErrorData::new(
                    ErrorCode::INTERNAL_ERROR,
                    format!("could not build the sampling result: {e}"),
                    None,
                )
            }),
            // The spec's "user rejected sampling request".
            _ => Err(ErrorData::new(
                ErrorCode(-1),
                "the user declined the sampling request",
                None,
            )),
        }
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let raw = serde_json::to_value(&request).unwrap_or(Value::Null);
        let text = |k: &str| {
            raw.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let ask = match &request {
            ElicitRequestParams::UrlElicitationParams { .. } => Ask::Url {
                message: text("message"),
                url: text("url"),
                elicitation_id: text("elicitationId"),
            },
            _ => Ask::Form {
                message: text("message"),
                schema: raw.get("requestedSchema").cloned().unwrap_or(Value::Null),
            },
        };
        let reply = self.ask(ask, &context).await;
        serde_json::from_value(reply.json()).map_err(|e| {
            ErrorData::new(
                ErrorCode::INTERNAL_ERROR,
                format!("could not build the elicitation result: {e}"),
                None,
            )
        })
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let note = ProgressNote {
            progress: params.progress,
            total: params.total,
            message: params.message,
        };
        self.calls.progress(&params.progress_token, note);
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        context: NotificationContext<RoleClient>,
    ) {
        let level = serde_json::to_value(params.level)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| "log".to_owned());
        let line = LogLine {
            level,
            logger: params.logger,
            data: params.data,
        };
        for part in line.text().lines() {
            self.log.push(part);
        }
        self.calls.log(origin(&context.extensions).as_ref(), &line);
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.log.push(
            "[pipewright] the server's tool list changed; it is read again before the next call",
        );
        self.tools_changed.store(true, Ordering::SeqCst);
    }
}
