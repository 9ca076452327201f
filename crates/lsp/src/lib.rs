//! `pipewright lsp`: a language server over stdio for pipeline files. In:
//! the editor's JSON-RPC (open, change, questions about a place); out:
//! diagnostics pushed after every change (load errors and warnings, then
//! preflight against the servers' tool lists once they are fetched in the
//! background) and answers computed by `engine::author`, the functions the
//! workbench's editor uses. Bad input is answered with an error, never a
//! panic; the server ends on `exit` or when stdin closes.

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use crossbeam_channel::{Sender, select};
use lsp_server::{ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::{
    CodeActionParams, CodeActionProviderCapability, CompletionOptions, CompletionParams,
    DidChangeTextDocumentParams, DidCloseTextDocumentParams, DidOpenTextDocumentParams,
    DocumentSymbolParams, GotoDefinitionParams, HoverParams, HoverProviderCapability,
    InitializeResult, LogMessageParams, MessageType, OneOf, PublishDiagnosticsParams,
    ReferenceParams, RenameOptions, RenameParams, ServerCapabilities, ServerInfo,
    TextDocumentPositionParams, TextDocumentSyncCapability, TextDocumentSyncKind, Uri,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::runtime::Handle;
use tokio::task::JoinHandle;

mod document;
mod position;
mod requests;
mod tools;
mod transport;

use document::Document;
use position::Lines;
use tools::Tools;
use transport::{Read1, Stdio};

/// How the server was started.
#[derive(Debug, Clone)]
pub struct Options {
    /// Connect the file's servers for their tool lists (`--no-connect`
    /// turns it off: no server process is started, no preflight).
    pub connect: bool,
    /// The driver's settings (its flags and `PIPEWRIGHT_*`).
    pub settings: pipewright_engine::settings::Settings,
}

/// How a session with the editor ended.
pub struct Ended {
    /// 0 after `shutdown` then `exit`, 1 otherwise (as LSP asks).
    pub code: u8,
    /// Tool-list fetches still under way: each closes its servers when it
    /// ends; aborting one drops its connections, which stops them.
    pub fetches: Vec<JoinHandle<()>>,
}

/// Serves one editor over stdin and stdout until `exit` or end of input.
/// Blocking: call it off the async runtime; fetches run on `runtime`.
pub fn serve(options: Options, runtime: Handle) -> Ended {
    let io = Stdio::open();
    let mut server = Server {
        out: io.sender.clone(),
        docs: HashMap::new(),
        tools: Tools::new(
            runtime,
            // A language server never prints: logins tell nobody.
            options
                .connect
                .then(|| options.settings.connect_options(|_| {})),
            options.settings.env.clone(),
        ),
        setup: Arc::new(document::Setup::of(&options.settings)),
        initialized: false,
        shut_down: false,
    };
    let arrived = server.tools.rx.clone();
    let code = loop {
        select! {
            recv(io.receiver) -> read => match read {
                Ok(Read1::Message(m)) => {
                    if let Some(code) = server.message(m) {
                        break code;
                    }
                }
                Ok(Read1::Bad(why, id)) => server.bad(why, id),
                Ok(Read1::End) | Err(_) => break 1,
            },
            recv(arrived) -> a => if let Ok((key, result)) = a {
                server.arrived(key, result);
            },
        }
    };
    let fetches = server.tools.take_tasks();
    drop(server);
    io.finish();
    Ended { code, fetches }
}

/// The server's state: the open files and the tool lists.
struct Server {
    out: Sender<Message>,
    docs: HashMap<Uri, Document>,
    tools: Tools,
    /// How documents load (the driver's limits).
    setup: Arc<document::Setup>,
    initialized: bool,
    shut_down: bool,
}

/// A failed request: its JSON-RPC error code and a sentence.
type Failure = (ErrorCode, String);

fn params<P: DeserializeOwned>(v: Value) -> Result<P, Failure> {
    serde_json::from_value(v).map_err(|e| (ErrorCode::InvalidParams, format!("bad params: {e}")))
}

fn to_value(v: impl Serialize) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            lsp_types::TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::FULL),
                save: Some(lsp_types::TextDocumentSyncSaveOptions::Supported(true)),
                ..Default::default()
            },
        )),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(["{", ".", ":", " "].map(String::from).to_vec()),
            ..CompletionOptions::default()
        }),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        rename_provider: Some(OneOf::Right(RenameOptions {
            prepare_provider: Some(true),
            work_done_progress_options: Default::default(),
        })),
        code_action_provider: Some(CodeActionProviderCapability::Simple(true)),
        document_symbol_provider: Some(OneOf::Left(true)),
        ..ServerCapabilities::default()
    }
}

impl Server {
    fn send(&self, m: impl Into<Message>) {
        let _ = self.out.send(m.into());
    }

    fn log(&self, kind: MessageType, message: String) {
        self.send(Notification::new(
            "window/logMessage".into(),
            LogMessageParams { typ: kind, message },
        ));
    }

    /// Handles one message; `Some(exit code)` when the server should end.
    fn message(&mut self, m: Message) -> Option<u8> {
        match m {
            Message::Request(r) => {
                let id = r.id.clone();
                let method = r.method.clone();
                // A bug on some input must not take the editor's server down.
                let result =
                    catch_unwind(AssertUnwindSafe(|| self.request(r))).unwrap_or_else(|_| {
                        Err((
                            ErrorCode::InternalError,
                            format!("`{method}` failed inside pipewright"),
                        ))
                    });
                self.send(match result {
                    Ok(v) => Response::new_ok(id, v),
                    Err((code, why)) => Response::new_err(id, code as i32, why),
                });
                None
            }
            Message::Notification(n) if n.method == "exit" => Some(u8::from(!self.shut_down)),
            Message::Notification(n) => {
                let method = n.method.clone();
                if catch_unwind(AssertUnwindSafe(|| self.notification(n))).is_err() {
                    self.log(
                        MessageType::ERROR,
                        format!("`{method}` failed inside pipewright"),
                    );
                }
                None
            }
            Message::Response(_) => None,
        }
    }

    fn bad(&self, why: String, id: Option<RequestId>) {
        match id {
            Some(id) => self.send(Response::new_err(id, ErrorCode::InvalidRequest as i32, why)),
            None => tracing::warn!("lsp: skipped {why}"),
        }
    }

    fn request(&mut self, r: Request) -> Result<Value, Failure> {
        if r.method == "initialize" {
            self.initialized = true;
            return Ok(to_value(InitializeResult {
                capabilities: capabilities(),
                server_info: Some(ServerInfo {
                    name: "pipewright".into(),
                    version: Some(env!("CARGO_PKG_VERSION").into()),
                }),
            }));
        }
        if !self.initialized {
            return Err((
                ErrorCode::ServerNotInitialized,
                "send `initialize` first".into(),
            ));
        }
        if self.shut_down {
            return Err((
                ErrorCode::InvalidRequest,
                "the server is shutting down".into(),
            ));
        }
        match r.method.as_str() {
            "shutdown" => {
                self.shut_down = true;
                Ok(Value::Null)
            }
            "textDocument/completion" => {
                let p: CompletionParams = params(r.params)?;
                let (doc, at) = self.at(&p.text_document_position)?;
                let fetched = doc.tools_key().and_then(|k| self.tools.ready(&k));
                Ok(to_value(requests::completion(doc, fetched.as_deref(), at)))
            }
            "textDocument/hover" => {
                let p: HoverParams = params(r.params)?;
                let (doc, at) = self.at(&p.text_document_position_params)?;
                let fetched = doc.tools_key().and_then(|k| self.tools.ready(&k));
                Ok(to_value(requests::hover(doc, fetched.as_deref(), at)))
            }
            "textDocument/definition" => {
                let p: GotoDefinitionParams = params(r.params)?;
                let tdp = &p.text_document_position_params;
                let (doc, at) = self.at(tdp)?;
                Ok(to_value(requests::definition(
                    &tdp.text_document.uri,
                    doc,
                    at,
                )))
            }
            "textDocument/references" => {
                let p: ReferenceParams = params(r.params)?;
                let tdp = &p.text_document_position;
                let (doc, at) = self.at(tdp)?;
                let with = p.context.include_declaration;
                Ok(to_value(requests::references(
                    &tdp.text_document.uri,
                    doc,
                    at,
                    with,
                )))
            }
            "textDocument/prepareRename" => {
                let p: TextDocumentPositionParams = params(r.params)?;
                let (doc, at) = self.at(&p)?;
                Ok(to_value(requests::prepare_rename(doc, at)))
            }
            "textDocument/rename" => {
                let p: RenameParams = params(r.params)?;
                let tdp = &p.text_document_position;
                let (doc, at) = self.at(tdp)?;
                requests::rename(&tdp.text_document.uri, doc, at, &p.new_name)
                    .map(to_value)
                    .map_err(|e| (ErrorCode::RequestFailed, e))
            }
            "textDocument/codeAction" => {
                let p: CodeActionParams = params(r.params)?;
                let doc = self.doc(&p.text_document.uri)?;
                Ok(to_value(requests::code_actions(
                    &p.text_document.uri,
                    doc,
                    p.range,
                )))
            }
            "textDocument/documentSymbol" => {
                let p: DocumentSymbolParams = params(r.params)?;
                let doc = self.doc(&p.text_document.uri)?;
                Ok(to_value(requests::symbols(doc)))
            }
            other => Err((
                ErrorCode::MethodNotFound,
                format!("unknown method `{other}`"),
            )),
        }
    }

    fn doc(&self, uri: &Uri) -> Result<&Document, Failure> {
        self.docs.get(uri).ok_or_else(|| {
            (
                ErrorCode::InvalidParams,
                format!("`{}` is not open", uri.as_str()),
            )
        })
    }

    fn at(
        &self,
        p: &TextDocumentPositionParams,
    ) -> Result<(&Document, pipewright_engine::diag::Pos), Failure> {
        let doc = self.doc(&p.text_document.uri)?;
        Ok((doc, Lines::new(&doc.text).pos(p.position)))
    }

    fn notification(&mut self, n: Notification) {
        if !self.initialized {
            return;
        }
        match n.method.as_str() {
            "textDocument/didOpen" => {
                if let Ok(p) = params::<DidOpenTextDocumentParams>(n.params) {
                    let mut doc = Document::new(
                        p.text_document.text,
                        p.text_document.version,
                        self.setup.clone(),
                    );
                    doc.read_recorded(p.text_document.uri.as_str());
                    self.docs.insert(p.text_document.uri.clone(), doc);
                    self.publish(&p.text_document.uri);
                }
            }
            "textDocument/didChange" => {
                if let Ok(p) = params::<DidChangeTextDocumentParams>(n.params)
                    && let Some(doc) = self.docs.get_mut(&p.text_document.uri)
                {
                    doc.change(p.content_changes, p.text_document.version);
                    self.publish(&p.text_document.uri);
                }
            }
            "textDocument/didSave" => {
                // A run may have been saved since: read its outputs again.
                if let Ok(p) = params::<lsp_types::DidSaveTextDocumentParams>(n.params)
                    && let Some(doc) = self.docs.get_mut(&p.text_document.uri)
                {
                    doc.read_recorded(p.text_document.uri.as_str());
                }
            }
            "textDocument/didClose" => {
                if let Ok(p) = params::<DidCloseTextDocumentParams>(n.params) {
                    self.docs.remove(&p.text_document.uri);
                    self.send(Notification::new(
                        "textDocument/publishDiagnostics".into(),
                        PublishDiagnosticsParams::new(p.text_document.uri, Vec::new(), None),
                    ));
                }
            }
            _ => {}
        }
    }

    /// Computes the file's marks (asking for its tool lists when they are
    /// not known) and pushes them.
    fn publish(&mut self, uri: &Uri) {
        let Some(doc) = self.docs.get(uri) else {
            return;
        };
        let fetched = match (doc.tools_key(), doc.last.as_ref()) {
            (Some(key), Some(p)) => self.tools.want(&key, p),
            _ => None,
        };
        let marks = doc.compute_marks(fetched.as_deref());
        let lines = Lines::new(&doc.text);
        let diagnostics = marks
            .iter()
            .map(|d| document::diagnostic(&lines, d))
            .collect();
        let version = doc.version;
        if let Some(doc) = self.docs.get_mut(uri) {
            doc.marks = marks;
        }
        self.send(Notification::new(
            "textDocument/publishDiagnostics".into(),
            PublishDiagnosticsParams::new(uri.clone(), diagnostics, Some(version)),
        ));
    }

    /// A fetch ended: keep its lists and publish again every file they
    /// are for; a failure is said once in the editor's log.
    fn arrived(&mut self, key: String, result: Result<tools::Fetched, String>) {
        if let Err(e) = &result {
            self.log(
                MessageType::WARNING,
                format!("pipewright: no tool lists, so no preflight: {e}"),
            );
        }
        self.tools.arrived(key.clone(), result);
        let uris: Vec<Uri> = self
            .docs
            .iter()
            .filter(|(_, d)| d.tools_key().as_deref() == Some(key.as_str()))
            .map(|(u, _)| u.clone())
            .collect();
        for uri in uris {
            self.publish(&uri);
        }
    }
}
