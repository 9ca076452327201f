//! One `tools/call` on a live connection: the request with its `_meta`,
//! the answer read as the server sent it, the server's questions, logs
//! and progress filed under the call, timeouts and cancellation told to
//! the server, and a tool that runs only as a task called again as one.

use super::*;

impl Connection {
    /// One `tools/call`.
    ///
    /// `meta` goes into the request's `params._meta` (next to the
    /// `progressToken` rmcp adds). The server's questions are declined (see
    /// [`Connection::call_scoped`]). When `timeout` passes, or `cancel` fires,
    /// the server is sent `notifications/cancelled` for the request and the
    /// call returns [`McpError::Timeout`] or [`McpError::Cancelled`] at once,
    /// without waiting for the server. Dropping the returned future also
    /// sends the cancellation.
    pub async fn call(
        &self,
        tool: &str,
        args: Map<String, Value>,
        meta: Option<Map<String, Value>>,
        timeout: Option<Duration>,
        cancel: &CancellationToken,
    ) -> Result<CallOutcome, McpError> {
        self.call_scoped(tool, args, meta, timeout, cancel, &CallScope::default())
            .await
    }

    /// [`Connection::call`] for a node: questions the server asks during
    /// the call go to `scope`'s responder, and its progress and log lines to
    /// `scope`'s notify hook and into the outcome's extras.
    pub async fn call_scoped(
        &self,
        tool: &str,
        args: Map<String, Value>,
        meta: Option<Map<String, Value>>,
        timeout: Option<Duration>,
        cancel: &CancellationToken,
        scope: &CallScope,
    ) -> Result<CallOutcome, McpError> {
        let server = self.inner.name.clone();
        if cancel.is_cancelled() {
            return Err(McpError::Cancelled {
                server,
                tool: tool.to_owned(),
            });
        }
        if self.is_closed() {
            return Err(Box::pin(self.closed_error()).await);
        }
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(args);
        let support = self
            .tools()
            .iter()
            .find(|t| t.name == tool)
            .map(|t| t.task_support)
            .unwrap_or_default();
        let as_task = task::use_task(tool, support, scope.task, timeout).map_err(|reason| {
            McpError::Transport {
                server: server.clone(),
                reason,
            }
        })?;
        let mut options = PeerRequestOptions::no_options();
        if let Some(meta) =
            revision::log_meta(meta.clone(), self.protocol_version(), self.inner.log_level)
        {
            options = options.with_meta(RequestMetaObject(MetaObject(meta)));
        }
        let started = Instant::now();
        // Kept to call again as a task if the server insists.
        let retry =
            (!as_task).then(|| (params.arguments.clone().unwrap_or_default(), meta.clone()));
        let peer = &self.inner.peer;
        let mut registered = Registered {
            calls: &self.inner.calls,
            ticket: Some(self.inner.calls.begin(scope.clone())),
        };
        let sent = peer
            .send_request_with_option(task::call_request(&params, as_task), options)
            .await;
        let mut handle = match sent {
            Ok(handle) => handle,
            Err(e) => return Err(Box::pin(self.call_error(e, tool)).await),
        };
        if let Some(ticket) = registered.ticket {
            self.inner
                .calls
                .sent(ticket, handle.id.clone(), handle.progress_token.clone());
        }
        // The request as it went on the wire: kept by a stdio transport,
        // else (HTTP) written out as rmcp sends it.
        let request = || match self.inner.replies.take_request(&handle.id) {
            Some(sent) => sent,
            None => {
                let mut request = request_json(
                    params.clone(),
                    meta.clone(),
                    handle.id.clone(),
                    handle.progress_token.clone(),
                );
                task::mark_request(&mut request, as_task);
                Json::from_value(request)
            }
        };
        let mut guard = AbandonGuard {
            peer: peer.clone(),
            id: Some(handle.id.clone()),
        };

        enum Stop<T> {
            Answer(T),
            Cancelled,
            TimedOut(Duration),
        }
        let deadline = async {
            match timeout {
                Some(after) => {
                    tokio::time::sleep(after).await;
                    after
                }
                None => std::future::pending().await,
            }
        };
        let stop = tokio::select! {
            biased;
            () = cancel.cancelled() => Stop::Cancelled,
            answer = &mut handle.rx => Stop::Answer(answer),
            after = deadline => Stop::TimedOut(after),
        };
        guard.id = None;
        let answer = match stop {
            Stop::Answer(answer) => answer,
            Stop::Cancelled => {
                self.inner.replies.forget(&handle.id);
                let reason = "cancelled by the user".to_owned();
                let _ = tokio::time::timeout(CANCEL_NOTICE_WAIT, handle.cancel(Some(reason))).await;
                return Err(McpError::Cancelled {
                    server,
                    tool: tool.to_owned(),
                });
            }
            Stop::TimedOut(after) => {
                self.inner.replies.forget(&handle.id);
                let reason = format!("timed out after {}", HumanDuration(after));
                let _ = tokio::time::timeout(CANCEL_NOTICE_WAIT, handle.cancel(Some(reason))).await;
                return Err(McpError::Timeout {
                    server,
                    tool: tool.to_owned(),
                    after,
                });
            }
        };
        let answer = match answer.as_ref().ok().and_then(task::created) {
            Some(created) => {
                let (inner, ticket) = (&self.inner, registered.ticket);
                let (calls, log) = (&inner.calls, &inner.log);
                let asks = input_required::TaskAsks {
                    conn: self,
                    scope,
                    tool,
                };
                let f = task::Follow {
                    peer,
                    calls,
                    ticket,
                    log,
                    server: &server,
                    tool,
                    asks: &asks,
                };
                match Box::pin(task::follow(f, created, (started, timeout), cancel)).await {
                    Ok(r) => Ok(Ok(ServerResult::CustomResult(CustomResult(r)))),
                    Err(task::Failure::Service(e)) => Ok(Err(e)),
                    Err(task::Failure::Closed) => return Err(Box::pin(self.closed_error()).await),
                    Err(task::Failure::Mcp(e)) => return Err(e),
                }
            }
            None => answer,
        };
        let duration = started.elapsed();
        // Notifications are handled on their own tasks: let the ones that
        // came before the answer land.
        for _ in 0..4 {
            tokio::task::yield_now().await;
        }
        let extras = registered.finish();
        let result = match answer {
            Ok(Ok(result)) => result,
            Ok(Err(e)) => match retry {
                Some(again) if task::refused_without_task(&e) => {
                    let when = (started, timeout);
                    return Box::pin(self.call_as_task(tool, again, when, cancel, scope)).await;
                }
                _ => return Err(Box::pin(self.call_error(e, tool)).await),
            },
            Err(_) => return Err(Box::pin(self.closed_error()).await),
        };
        let kept = reply::is_stand_in(&result)
            .then(|| self.inner.replies.take(&handle.id))
            .flatten();
        let request = request();
        self.inner.replies.forget(&handle.id);
        let result = match (kept, result) {
            (Some(kept), _) => Ok(kept),
            (None, ServerResult::InputRequiredResult(asked)) => {
                let asked = (asked, request, started, extras);
                return Box::pin(self.answer_input(asked, timeout, cancel, scope)).await;
            }
            // Over HTTP rmcp has parsed the answer: written out once as
            // the text pipewright keeps.
            (None, ServerResult::CallToolResult(r)) => output::kept_from(&r),
            (None, other) => output::kept_from(&other),
        }
        .map_err(|e| McpError::Transport {
            server: server.clone(),
            reason: format!("could not read the result of `{tool}`: {e}"),
        })?;
        if !result.as_text().is_some_and(|t| t.starts_with('{')) && !result.tree().is_object() {
            return Err(McpError::Transport {
                server,
                reason: format!(
                    "`{tool}` was answered with `{}`, which is not a tool result (an object with `content`)",
                    excerpt(result.tree())
                ),
            });
        }
        let is_error = output::is_error(&result);
        if let Some(again) = retry.filter(|_| is_error && task::refused_text(&result)) {
            let when = (started, timeout);
            return Box::pin(self.call_as_task(tool, again, when, cancel, scope)).await;
        }
        Ok(CallOutcome {
            request,
            result,
            is_error,
            duration,
            replayed: false,
            extras,
        })
    }

    /// Calls `tool` again as a task once the server refused a plain call,
    /// and remembers it runs only as one (for a server whose tool list did
    /// not say `execution.taskSupport: required`).
    async fn call_as_task(
        &self,
        tool: &str,
        (args, meta): (Map<String, Value>, Option<Map<String, Value>>),
        (started, timeout): (Instant, Option<Duration>),
        cancel: &CancellationToken,
        scope: &CallScope,
    ) -> Result<CallOutcome, McpError> {
        {
            let mut tools = self
                .inner
                .tools
                .write()
                .unwrap_or_else(PoisonError::into_inner);
            *tools = Arc::new(tools::task_required(&tools, tool));
        }
        self.inner.log.push(&format!(
            "[pipewright] the server refused a plain call of `{tool}` (it runs only as a task): calling it again as a task"
        ));
        let left = timeout.map(|t| t.saturating_sub(started.elapsed()));
        self.call_scoped(tool, args, meta, left, cancel, scope)
            .await
    }
}
