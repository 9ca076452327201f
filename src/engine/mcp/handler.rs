//! pipewright's side of the conversation: what it answers when a server asks
//! it something, and what it keeps of the server's notifications.
// Roots, sampling and logging are deprecated by SEP-2577 but are what the
// servers in use today speak; pipewright keeps answering them.
#![expect(
    deprecated,
    reason = "roots/sampling/logging are still spoken by servers today"
)]

use rmcp::{
    ClientHandler,
    model::{
        ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
        ElicitRequestParams, ElicitResult, ErrorCode, ErrorData, Implementation, ListRootsResult,
        LoggingMessageNotificationParam, ProtocolVersion, RootsCapabilities,
    },
    service::{NotificationContext, RequestContext, RoleClient},
};
use serde_json::Value;

use super::{log::ServerLog, roots::Root};

/// The client handler given to rmcp for one connection.
pub(crate) struct Client {
    config: ClientConfig,
    roots: Vec<Root>,
    log: ServerLog,
}

impl Client {
    pub(crate) fn new(name: &str, version: &str, roots: Vec<Root>, log: ServerLog) -> Self {
        let mut capabilities = ClientCapabilities::default();
        capabilities.roots = Some(RootsCapabilities::default());
        let config = ClientConfig::new(capabilities, Implementation::new(name, version))
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE);
        Self { config, roots, log }
    }

    fn refuse(&self, what: &str) -> ErrorData {
        let message = format!("pipewright does not answer {what} requests");
        self.log.push(&format!(
            "[pipewright] refused a {what} request from the server"
        ));
        ErrorData::new(ErrorCode::METHOD_NOT_FOUND, message, None)
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
        _params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        Err(self.refuse("sampling"))
    }

    async fn create_elicitation(
        &self,
        _request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        Err(self.refuse("elicitation"))
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let level = serde_json::to_value(params.level)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| "log".to_owned());
        let data = match &params.data {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let line = match &params.logger {
            Some(logger) => format!("[{level} {logger}] {data}"),
            None => format!("[{level}] {data}"),
        };
        for part in line.lines() {
            self.log.push(part);
        }
    }
}
