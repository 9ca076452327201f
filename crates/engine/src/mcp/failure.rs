//! A failed call in words: the error of a connection that ended, and of a
//! JSON-RPC error answer (an answer pipewright could not read among them).

use rmcp::ServiceError;

use super::error::{McpError, chain_message};
use super::transport::describe_http_error;
use super::{Connection, Endpoint, reply, revision};

impl Connection {
    /// The error of a call on a connection that ended: pipewright's own
    /// reason when it ended it, else the server's doing.
    pub(super) async fn closed_error(&self) -> McpError {
        let endpoint = &self.inner.endpoint;
        if let Some(reason) = endpoint.verdict() {
            return McpError::Transport {
                server: self.inner.name.clone(),
                reason,
            };
        }
        McpError::Closed {
            server: self.inner.name.clone(),
            stdout_note: endpoint.stdout_note(),
            stderr_tail: endpoint.stderr_tail(&self.inner.log).await,
        }
    }

    pub(super) async fn call_error(&self, e: ServiceError, tool: &str) -> McpError {
        let server = self.inner.name.clone();
        match e {
            ServiceError::McpError(data)
                if let Some((what, received)) =
                    reply::unreadable_detail(data.code.0, &data.message, data.data.as_ref()) =>
            {
                McpError::Unreadable {
                    server,
                    method: format!("tools/call {tool}"),
                    what,
                    received: Box::new(received),
                }
            }
            ServiceError::McpError(data) if reply::too_large(data.code.0, data.data.as_ref()) => {
                McpError::Transport {
                    server,
                    reason: data.message.into_owned(),
                }
            }
            ServiceError::McpError(data) => {
                let message =
                    revision::hint(&server, self.protocol_version(), data.message.into_owned());
                McpError::Protocol {
                    server,
                    method: "tools/call".to_owned(),
                    code: data.code.0,
                    message,
                    data: data.data.map(Box::new),
                }
            }
            ServiceError::Cancelled { .. } => McpError::Cancelled {
                server,
                tool: tool.to_owned(),
            },
            ServiceError::Timeout { timeout } => McpError::Timeout {
                server,
                tool: tool.to_owned(),
                after: timeout,
            },
            ServiceError::TransportSend(e) if matches!(self.inner.endpoint, Endpoint::Http) => {
                McpError::Transport {
                    server,
                    reason: describe_http_error(&*e.error),
                }
            }
            // rmcp's word for a response stream that ended early; the
            // session itself may live on.
            ServiceError::TransportClosed
                if matches!(self.inner.endpoint, Endpoint::Http) && !self.is_closed() =>
            {
                McpError::Transport {
                    server,
                    reason: format!(
                        "the response stream of `{tool}` ended before its answer (the server cut it short)"
                    ),
                }
            }
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                self.closed_error().await
            }
            other => McpError::Transport {
                server,
                reason: chain_message(&other),
            },
        }
    }
}
