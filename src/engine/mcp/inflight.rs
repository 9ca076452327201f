//! The calls a connection has in flight, so that what a server sends in
//! the middle of a call — a question, a log line, progress — lands with the
//! call (and node) it belongs to.
//!
//! Progress names its call by the `progressToken`. Questions and log lines
//! name no call on stdio; over HTTP they arrive on the call's own response
//! stream when the server ties them to it. Otherwise a question goes to the
//! call in flight that has asked the fewest questions so far (the oldest
//! among equals: parallel calls that each ask once are told apart), and it
//! stays open until every call that could have asked it has ended, since
//! the one that did cannot end before it is answered. A log line goes to
//! every call in flight.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use rmcp::model::{ProgressToken, RequestId};
use tokio_util::sync::CancellationToken;

use super::human::{CallExtras, CallScope, Interaction, LogLine, Notice, ProgressNote};

/// Progress notes that came before their call's token was known.
const MAX_EARLY: usize = 32;

/// A call's place in the registry.
pub(crate) type Ticket = u64;

#[derive(Clone, Default)]
pub(crate) struct InFlight {
    inner: Arc<Mutex<Calls>>,
}

#[derive(Default)]
struct Calls {
    next: Ticket,
    /// Requests sent so far.
    sent: u64,
    calls: Vec<Call>,
    early: Vec<(ProgressToken, ProgressNote)>,
}

struct Call {
    ticket: Ticket,
    /// Cancelled when the call ends, so a question still open for it is
    /// given up.
    done: CancellationToken,
    request: Option<RequestId>,
    token: Option<ProgressToken>,
    scope: CallScope,
    extras: CallExtras,
    /// Questions filed under it so far.
    asked: u32,
    /// Its place in the order requests went out (`None`: not sent yet, so
    /// it cannot have asked anything).
    sent: Option<u64>,
}

/// Who a question is filed under, and when it is given up.
pub(crate) struct Asking {
    pub(crate) ticket: Ticket,
    pub(crate) scope: CallScope,
    /// The question is given up once every one of these has fired: the
    /// calls that could have asked it have all ended.
    pub(crate) until: Vec<CancellationToken>,
    /// The other calls that could have asked it, in case the one it is
    /// filed under ends first.
    pub(crate) others: Vec<Ticket>,
}

impl InFlight {
    fn lock(&self) -> MutexGuard<'_, Calls> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers a call before its request is sent.
    pub(crate) fn begin(&self, scope: CallScope) -> Ticket {
        let mut calls = self.lock();
        calls.next += 1;
        let ticket = calls.next;
        calls.calls.push(Call {
            ticket,
            done: CancellationToken::new(),
            request: None,
            token: None,
            scope,
            extras: CallExtras::default(),
            asked: 0,
            sent: None,
        });
        ticket
    }

    /// Names the request and progress token of a sent call.
    pub(crate) fn sent(&self, ticket: Ticket, request: RequestId, token: ProgressToken) {
        let mut calls = self.lock();
        let early: Vec<ProgressNote> = {
            let (mine, rest) = std::mem::take(&mut calls.early)
                .into_iter()
                .partition(|(t, _)| *t == token);
            calls.early = rest;
            mine.into_iter().map(|(_, n)| n).collect()
        };
        calls.sent += 1;
        let seq = calls.sent;
        let Some(call) = calls.calls.iter_mut().find(|c| c.ticket == ticket) else {
            return;
        };
        call.sent = Some(seq);
        call.request = Some(request);
        call.token = Some(token);
        for note in &early {
            call.extras.progress(note.clone());
        }
        let scope = call.scope.clone();
        drop(calls);
        for note in early {
            scope.tell(Notice::Progress(note));
        }
    }

    /// Unregisters a call and hands back what it heard.
    pub(crate) fn end(&self, ticket: Ticket) -> CallExtras {
        let mut calls = self.lock();
        match calls.calls.iter().position(|c| c.ticket == ticket) {
            Some(i) => {
                let call = calls.calls.remove(i);
                call.done.cancel();
                call.extras
            }
            None => CallExtras::default(),
        }
    }

    /// The call a question belongs to: the one whose response stream it
    /// came on, else (no stream named) the call in flight that has asked
    /// the fewest questions, the first sent among equals (a server works
    /// through its requests in order). A question that names
    /// a call no longer in flight belongs to none.
    pub(crate) fn asker(&self, origin: Option<&RequestId>) -> Option<Asking> {
        let mut calls = self.lock();
        let at = match origin {
            Some(id) => calls
                .calls
                .iter()
                .position(|c| c.request.as_ref() == Some(id))?,
            None => calls
                .calls
                .iter()
                .enumerate()
                .min_by_key(|(_, c)| (c.asked, c.sent.is_none(), c.sent, c.ticket))
                .map(|(i, _)| i)?,
        };
        calls.calls[at].asked += 1;
        let call = &calls.calls[at];
        let (until, others) = if origin.is_some() {
            (vec![call.done.clone()], Vec::new())
        } else {
            (
                calls.calls.iter().map(|c| c.done.clone()).collect(),
                calls
                    .calls
                    .iter()
                    .map(|c| c.ticket)
                    .filter(|t| *t != call.ticket)
                    .collect(),
            )
        };
        Some(Asking {
            ticket: call.ticket,
            scope: call.scope.clone(),
            until,
            others,
        })
    }

    /// Keeps a question's interaction with its call and tells the driver;
    /// when that call has ended, with the first of `others` still in
    /// flight (one of them asked: the asker waits for its answer).
    pub(crate) fn answered(&self, ticket: Ticket, others: &[Ticket], interaction: Interaction) {
        let scope = {
            let mut calls = self.lock();
            let found = std::iter::once(ticket)
                .chain(others.iter().copied())
                .find_map(|t| calls.calls.iter().position(|c| c.ticket == t));
            let Some(at) = found else {
                return;
            };
            let call = &mut calls.calls[at];
            call.extras.interactions.push(interaction.clone());
            call.scope.clone()
        };
        scope.tell(Notice::Answered(interaction));
    }

    /// Files a progress note under the call with `token`.
    pub(crate) fn progress(&self, token: &ProgressToken, note: ProgressNote) {
        let scope = {
            let mut calls = self.lock();
            match calls
                .calls
                .iter_mut()
                .find(|c| c.token.as_ref() == Some(token))
            {
                Some(call) => {
                    call.extras.progress(note.clone());
                    call.scope.clone()
                }
                None => {
                    if calls.early.len() >= MAX_EARLY {
                        calls.early.remove(0);
                    }
                    calls.early.push((token.clone(), note));
                    return;
                }
            }
        };
        scope.tell(Notice::Progress(note));
    }

    /// Files a log line under the call whose stream it came on, else under
    /// every call in flight.
    pub(crate) fn log(&self, origin: Option<&RequestId>, line: &LogLine) {
        let scopes: Vec<CallScope> = {
            let mut calls = self.lock();
            let exact = origin.map(|id| {
                calls
                    .calls
                    .iter()
                    .position(|c| c.request.as_ref() == Some(id))
            });
            // A line tied to a call that has ended is filed nowhere (the
            // server log keeps it).
            calls
                .calls
                .iter_mut()
                .enumerate()
                .filter(|(i, _)| exact.is_none_or(|e| e == Some(*i)))
                .map(|(_, call)| {
                    call.extras.log(line.clone());
                    call.scope.clone()
                })
                .collect()
        };
        for scope in scopes {
            scope.tell(Notice::Log(line.clone()));
        }
    }
}

/// A call's place among the calls in flight, given up when the call ends
/// however it ends.
pub(crate) struct Registered<'a> {
    pub(crate) calls: &'a InFlight,
    pub(crate) ticket: Option<Ticket>,
}

impl Registered<'_> {
    /// Ends the registration and hands back what the call heard.
    pub(crate) fn finish(&mut self) -> CallExtras {
        self.ticket
            .take()
            .map(|t| self.calls.end(t))
            .unwrap_or_default()
    }
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::NumberOrString;

    fn scope(node: &str) -> CallScope {
        CallScope {
            node: Some(node.to_owned()),
            ..CallScope::default()
        }
    }

    fn note(p: f64) -> ProgressNote {
        ProgressNote {
            progress: p,
            total: Some(2.0),
            message: None,
        }
    }

    #[test]
    fn progress_before_the_token_is_known_is_kept() {
        let f = InFlight::default();
        let t = f.begin(scope("a"));
        let token = ProgressToken(NumberOrString::Number(1));
        f.progress(&token, note(1.0));
        f.sent(t, RequestId::Number(5), token.clone());
        f.progress(&token, note(2.0));
        let x = f.end(t);
        assert_eq!(x.progress.len(), 2);
        assert_eq!(x.progress[1].progress, 2.0);
    }

    #[test]
    fn logs_go_to_their_stream_or_to_every_call() {
        let f = InFlight::default();
        let a = f.begin(scope("a"));
        let b = f.begin(scope("b"));
        f.sent(
            a,
            RequestId::Number(1),
            ProgressToken(NumberOrString::Number(1)),
        );
        f.sent(
            b,
            RequestId::Number(2),
            ProgressToken(NumberOrString::Number(2)),
        );
        let line = LogLine {
            level: "info".into(),
            logger: None,
            data: "x".into(),
        };
        f.log(Some(&RequestId::Number(2)), &line);
        f.log(None, &line);
        assert_eq!(f.asker(None).unwrap().ticket, a);
        assert!(f.asker(Some(&RequestId::Number(9))).is_none());
        assert_eq!(f.asker(Some(&RequestId::Number(2))).unwrap().ticket, b);
        assert_eq!(f.end(a).logs.len(), 1);
        assert_eq!(f.end(b).logs.len(), 2);
        assert!(f.asker(None).is_none());
    }

    /// Two parallel calls on stdio each ask once: the second question goes
    /// to the call that has not asked, and it outlives the first call.
    #[test]
    fn parallel_questions_go_to_different_calls_and_outlive_the_first() {
        let f = InFlight::default();
        // Registered in one order, sent in the other: the send order counts.
        let b = f.begin(scope("b"));
        let a = f.begin(scope("a"));
        for (t, id) in [(a, 1), (b, 2)] {
            f.sent(
                t,
                RequestId::Number(id),
                ProgressToken(rmcp::model::NumberOrString::Number(id)),
            );
        }
        let first = f.asker(None).unwrap();
        assert_eq!(first.ticket, a);
        let second = f.asker(None).unwrap();
        assert_eq!(second.ticket, b, "both questions went to the oldest call");
        assert_eq!(second.scope.node.as_deref(), Some("b"));
        f.end(a);
        assert!(
            !second.until.iter().all(CancellationToken::is_cancelled),
            "the second question was given up when the first call ended"
        );
        let interaction = Interaction {
            kind: "elicitation".into(),
            server: "s".into(),
            request: serde_json::Value::Null,
            reply: serde_json::Value::Null,
            by: super::super::human::Source::Answers,
            error: None,
        };
        // Filed under `a`, which has ended: it goes to `b`, still waiting.
        f.answered(first.ticket, &first.others, interaction);
        assert_eq!(f.end(b).interactions.len(), 1);
        assert!(second.until.iter().all(CancellationToken::is_cancelled));
    }
}
