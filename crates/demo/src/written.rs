//! Answers the demo server writes as text, never as a tree: over stdio a
//! tool may hand its result as the JSON text it is (`big_output` does), so
//! a 5 MiB answer costs the server that text, not a `Value` of it and a
//! copy in the message rmcp would build. The tool returns a stand-in that
//! names the text; the stdio transport writes the text in its place.

use std::collections::HashMap;
use std::sync::{
    Arc, Mutex, PoisonError,
    atomic::{AtomicU64, Ordering},
};

use rmcp::{
    RoleServer,
    model::{CallToolResult, JsonRpcMessage, ServerResult},
    service::{RxJsonRpcMessage, TxJsonRpcMessage},
    transport::{Transport, async_rw::AsyncRwTransport},
};
use serde_json::Value;
use tokio::io::{AsyncWrite, AsyncWriteExt};

/// The key of a stand-in's structured content.
const KEY: &str = "pipewright-demo/written";

/// Results waiting to be written, by key. Shared by the tools (which put)
/// and the stdio transport (which takes).
#[derive(Debug, Default, Clone)]
pub(crate) struct Written {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    next: AtomicU64,
    texts: Mutex<HashMap<u64, String>>,
}

impl Written {
    /// Keeps `result` (the JSON text of a `CallToolResult`, without
    /// `resultType`) and returns the stand-in the tool answers with.
    pub(crate) fn stand_in(&self, result: String) -> CallToolResult {
        let key = self.inner.next.fetch_add(1, Ordering::Relaxed);
        self.inner
            .texts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, result);
        let mut mark = serde_json::Map::new();
        mark.insert(KEY.into(), Value::from(key));
        CallToolResult::structured(Value::Object(mark))
    }

    /// The text a stand-in names, taken.
    fn take(&self, result: &CallToolResult) -> Option<String> {
        let key = result.structured_content.as_ref()?.get(KEY)?.as_u64()?;
        self.inner
            .texts
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&key)
    }
}

/// rmcp's stdio transport, with stand-ins written as their text.
pub(crate) struct WrittenStdio<R: tokio::io::AsyncRead, W> {
    read: AsyncRwTransport<RoleServer, R, tokio::io::Sink>,
    write: Arc<tokio::sync::Mutex<W>>,
    written: Written,
}

impl<R, W> WrittenStdio<R, W>
where
    R: tokio::io::AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    pub(crate) fn new(read: R, write: W, written: Written) -> Self {
        WrittenStdio {
            read: AsyncRwTransport::new(read, tokio::io::sink()),
            write: Arc::new(tokio::sync::Mutex::new(write)),
            written,
        }
    }
}

/// The bytes of `message`: a stand-in's text in place of its result.
fn line(
    message: &TxJsonRpcMessage<RoleServer>,
    written: &Written,
) -> std::io::Result<Vec<Vec<u8>>> {
    if let JsonRpcMessage::Response(r) = message
        && let ServerResult::CallToolResult(result) = &r.result
        && let Some(text) = written.take(result)
    {
        let id = serde_json::to_vec(&r.id).map_err(std::io::Error::other)?;
        // `resultType` is there when the client speaks 2026-07-28 (rmcp
        // strips it for older ones): the written text gets it too.
        let body = text.strip_prefix('{').unwrap_or(&text).as_bytes().to_vec();
        let typed = match (result.result_type.is_some(), body.first()) {
            (false, _) => &b"{"[..],
            (true, Some(b'}')) => &b"{\"resultType\":\"complete\""[..],
            (true, _) => &b"{\"resultType\":\"complete\","[..],
        };
        let mut head = b"{\"jsonrpc\":\"2.0\",\"id\":".to_vec();
        head.extend_from_slice(&id);
        head.extend_from_slice(b",\"result\":");
        head.extend_from_slice(typed);
        return Ok(vec![head, body, b"}\n".to_vec()]);
    }
    let mut bytes = serde_json::to_vec(message).map_err(std::io::Error::other)?;
    bytes.push(b'\n');
    Ok(vec![bytes])
}

impl<R, W> Transport<RoleServer> for WrittenStdio<R, W>
where
    R: tokio::io::AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let parts = line(&item, &self.written);
        let write = Arc::clone(&self.write);
        async move {
            let mut w = write.lock().await;
            for part in parts? {
                w.write_all(&part).await?;
            }
            w.flush().await
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleServer>>> + Send {
        self.read.receive()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.read.close().await?;
        self.write.lock().await.shutdown().await
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{NumberOrString, ResultType};
    use serde_json::json;

    use super::*;

    #[test]
    fn a_stand_in_is_written_as_its_text() {
        let written = Written::default();
        let result = r#"{"content":[],"structuredContent":{"n":1},"isError":false}"#;
        let mut stand_in = written.stand_in(result.to_owned());
        let message = |r: CallToolResult| {
            JsonRpcMessage::response(ServerResult::CallToolResult(r), NumberOrString::Number(7))
        };
        let mut legacy = stand_in.clone();
        legacy.result_type = None;
        let legacy = line(&message(legacy), &written).unwrap().concat();
        let parsed: Value = serde_json::from_slice(&legacy).unwrap();
        assert_eq!(
            parsed,
            json!({"jsonrpc": "2.0", "id": 7, "result": {"content": [], "structuredContent": {"n": 1}, "isError": false}})
        );
        // Taken once: a second send of the same stand-in is the stand-in.
        let again = line(&message(stand_in.clone()), &written).unwrap().concat();
        assert!(String::from_utf8_lossy(&again).contains(KEY));
        stand_in = written.stand_in(result.to_owned());
        stand_in.result_type = Some(ResultType::COMPLETE);
        let modern = line(&message(stand_in), &written).unwrap().concat();
        let parsed: Value = serde_json::from_slice(&modern).unwrap();
        assert_eq!(parsed["result"]["resultType"], "complete");
        assert_eq!(parsed["result"]["structuredContent"], json!({"n": 1}));
    }
}
