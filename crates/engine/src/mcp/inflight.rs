//! The calls a connection has in flight, so that what a server sends in
//! the middle of a call — a question, a log line, progress — lands with the
//! call (and node) it belongs to.
//!
//! Progress names its call by the `progressToken`. Questions and log lines
//! name no call on stdio; over HTTP they arrive on the call's own response
//! stream when the server ties them to it. Otherwise a log line goes to
//! every call in flight, and a question is filed under the likeliest of the
//! calls in flight (the oldest with no question open, then with the fewest
//! asked), its *candidates* kept: it is withdrawn only when every candidate
//! has ended, and its answer lands with the filed call, or the oldest
//! candidate still in flight if that one ended first.
//!
//! A call made as a task is also known by its task id (questions about a
//! task carry it in `_meta`) and by the requests that follow it up
//! (`tasks/result`, on whose response stream its questions may come).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use rmcp::model::{ProgressToken, RequestId};
use tokio_util::sync::CancellationToken;

use super::human::{CallExtras, CallScope, Interaction, LogLine, Notice, ProgressNote, TaskNote};

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
    calls: Vec<Call>,
    early: Vec<(ProgressToken, ProgressNote)>,
    /// Questions open that name no call.
    open: Vec<Open>,
}

/// A question open that names no call: the calls that may have asked it.
struct Open {
    id: u64,
    /// Where its answer goes while that call is in flight.
    filed: Ticket,
    /// The calls in flight when it came that have not ended since.
    candidates: Vec<Ticket>,
    /// Fires when the last candidate ends.
    withdrawn: CancellationToken,
}

/// Whom a question is filed under, and when it is given up.
pub(crate) struct Filing {
    /// Names the question to [`InFlight::answered`].
    pub(crate) id: Filed,
    pub(crate) scope: CallScope,
    /// The nodes of the calls that may have asked, when more than one may
    /// have (the question named none); empty when it is known.
    pub(crate) candidates: Vec<String>,
    /// Fires when the call the question belongs to has surely ended.
    pub(crate) withdrawn: CancellationToken,
}

/// How an open question is found again when it is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Filed {
    /// Its call is known.
    Call(Ticket),
    /// It named no call; an entry of `open`.
    Guessed(u64),
}

struct Call {
    ticket: Ticket,
    /// Cancelled when the call ends, so a question still open for it is
    /// given up.
    done: CancellationToken,
    request: Option<RequestId>,
    /// Requests sent on the call's behalf (a task's `tasks/result`).
    also: Vec<RequestId>,
    /// The task the call became.
    task: Option<String>,
    token: Option<ProgressToken>,
    scope: CallScope,
    extras: CallExtras,
}

impl Call {
    fn is(&self, id: &RequestId) -> bool {
        self.request.as_ref() == Some(id) || self.also.contains(id)
    }
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
            also: Vec::new(),
            task: None,
            token: None,
            scope,
            extras: CallExtras::default(),
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
        let Some(call) = calls.calls.iter_mut().find(|c| c.ticket == ticket) else {
            return;
        };
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
                for open in &mut calls.open {
                    open.candidates.retain(|t| *t != ticket);
                    if open.candidates.is_empty() {
                        open.withdrawn.cancel();
                    }
                }
                calls.open.retain(|o| !o.candidates.is_empty());
                call.extras
            }
            None => CallExtras::default(),
        }
    }

    /// Names the task a call became.
    pub(crate) fn task_begun(&self, ticket: Ticket, task: &str) {
        if let Some(call) = self.lock().calls.iter_mut().find(|c| c.ticket == ticket) {
            call.task = Some(task.to_owned());
        }
    }

    /// Names a request sent on a call's behalf (its task's `tasks/result`).
    pub(crate) fn also(&self, ticket: Ticket, request: RequestId) {
        if let Some(call) = self.lock().calls.iter_mut().find(|c| c.ticket == ticket) {
            call.also.push(request);
        }
    }

    /// Keeps exchanges with a call (the driver was told of them already).
    pub(crate) fn heard(&self, ticket: Ticket, interactions: Vec<Interaction>) {
        if let Some(call) = self.lock().calls.iter_mut().find(|c| c.ticket == ticket) {
            call.extras.interactions.extend(interactions);
        }
    }

    /// Keeps a task status with its call and tells the driver.
    pub(crate) fn task_note(&self, ticket: Ticket, note: TaskNote) {
        let scope = {
            let mut calls = self.lock();
            let Some(call) = calls.calls.iter_mut().find(|c| c.ticket == ticket) else {
                return;
            };
            call.extras.task(&note);
            call.scope.clone()
        };
        scope.tell(Notice::Task(note));
    }

    /// The call a question belongs to: the one whose task it names (its
    /// related-task `_meta`), else the one whose response stream it came
    /// on, else (neither named) a guess among the calls in flight. A
    /// question that names a call no longer in flight, or comes when none
    /// is, belongs to none.
    pub(crate) fn asker(&self, origin: Option<&RequestId>, task: Option<&str>) -> Option<Filing> {
        let mut calls = self.lock();
        let by_task = task.and_then(|t| {
            calls
                .calls
                .iter()
                .position(|c| c.task.as_deref() == Some(t))
        });
        if by_task.is_some() || origin.is_some() {
            let call = match by_task {
                Some(i) => &calls.calls[i],
                None => calls
                    .calls
                    .iter()
                    .find(|c| origin.is_some_and(|id| c.is(id)))?,
            };
            return Some(Filing {
                id: Filed::Call(call.ticket),
                scope: call.scope.clone(),
                candidates: Vec::new(),
                withdrawn: call.done.clone(),
            });
        }
        // A call waiting for an answer seldom asks again before it has
        // one, and one already answered has likely had its say: the oldest
        // call with the fewest questions open, then asked, is the guess.
        let open_of = |t: Ticket| calls.open.iter().filter(|o| o.filed == t).count();
        let call = calls
            .calls
            .iter()
            .enumerate()
            .min_by_key(|(i, c)| (open_of(c.ticket), c.extras.interactions.len(), *i))
            .map(|(_, c)| c)?;
        let filed = call.ticket;
        let scope = call.scope.clone();
        let tickets: Vec<Ticket> = calls.calls.iter().map(|c| c.ticket).collect();
        // By node: the iterations of one fan-out node are one candidate.
        let mut candidates: Vec<String> = Vec::new();
        for c in &calls.calls {
            let node = c.scope.node.clone().unwrap_or_else(|| "?".to_owned());
            if !candidates.contains(&node) {
                candidates.push(node);
            }
        }
        if candidates.len() < 2 {
            candidates.clear();
        }
        calls.next += 1;
        let id = calls.next;
        let withdrawn = CancellationToken::new();
        calls.open.push(Open {
            id,
            filed,
            candidates: tickets,
            withdrawn: withdrawn.clone(),
        });
        Some(Filing {
            id: Filed::Guessed(id),
            scope,
            candidates,
            withdrawn,
        })
    }

    /// Keeps a question's interaction with its call and tells the driver.
    /// A question that named no call goes to the call it was filed under,
    /// or, if that one has ended, the oldest candidate still in flight.
    pub(crate) fn answered(&self, filed: Filed, interaction: Interaction) {
        let scope = {
            let mut calls = self.lock();
            let ticket = match filed {
                Filed::Call(t) => Some(t),
                Filed::Guessed(id) => {
                    let at = calls.open.iter().position(|o| o.id == id);
                    at.map(|i| calls.open.remove(i)).and_then(|o| {
                        let live = |t: &Ticket| calls.calls.iter().any(|c| c.ticket == *t);
                        if live(&o.filed) {
                            Some(o.filed)
                        } else {
                            o.candidates.into_iter().find(|t| live(t))
                        }
                    })
                }
            };
            let Some(call) = calls.calls.iter_mut().find(|c| Some(c.ticket) == ticket) else {
                return;
            };
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
            let exact = origin.map(|id| calls.calls.iter().position(|c| c.is(id)));
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
        assert!(f.asker(Some(&RequestId::Number(9)), None).is_none());
        assert_eq!(
            f.asker(Some(&RequestId::Number(2)), None).map(|q| q.id),
            Some(Filed::Call(b))
        );
        assert_eq!(f.end(a).logs.len(), 1);
        assert_eq!(f.end(b).logs.len(), 2);
        assert!(f.asker(None, None).is_none());
    }

    fn asked(node: &str) -> Interaction {
        Interaction {
            kind: "elicitation".into(),
            server: "s".into(),
            request: serde_json::json!({"node": node}),
            reply: serde_json::json!({"action": "accept"}),
            by: super::super::human::Source::Answers,
            error: None,
        }
    }

    #[test]
    fn a_task_question_goes_to_the_call_of_its_task() {
        let f = InFlight::default();
        let a = f.begin(scope("a"));
        let b = f.begin(scope("b"));
        f.task_begun(b, "t1");
        // By the related-task `_meta`, even with no stream named.
        let q = f.asker(None, Some("t1")).expect("b's task");
        assert_eq!(q.id, Filed::Call(b));
        assert!(q.candidates.is_empty());
        // By the `tasks/result` stream it came on.
        f.also(b, RequestId::Number(40));
        let q = f
            .asker(Some(&RequestId::Number(40)), None)
            .expect("b's stream");
        assert_eq!(q.id, Filed::Call(b));
        f.task_note(
            b,
            TaskNote {
                task: "t1".into(),
                status: "working".into(),
                message: None,
            },
        );
        assert!(f.end(a).task.is_none());
        assert_eq!(f.end(b).task.map(|t| t.id), Some("t1".to_owned()));
    }

    #[test]
    fn unnamed_questions_go_one_to_each_call_and_outlive_the_first_call() {
        let f = InFlight::default();
        let a = f.begin(scope("a"));
        let b = f.begin(scope("b"));
        let first = f.asker(None, None).expect("a call is in flight");
        let second = f.asker(None, None).expect("a call is in flight");
        // Neither names its call: both say who may ask, and the second is
        // filed under the call that has no question open yet.
        assert_eq!(first.candidates, ["a", "b"]);
        assert_eq!(first.scope.node.as_deref(), Some("a"));
        assert_eq!(second.scope.node.as_deref(), Some("b"));
        // `a` ends: the second question may still be `b`'s, so it stays.
        f.answered(first.id, asked("a"));
        assert_eq!(f.end(a).interactions, [asked("a")]);
        assert!(!second.withdrawn.is_cancelled());
        f.answered(second.id, asked("b"));
        assert_eq!(f.end(b).interactions, [asked("b")]);
    }

    #[test]
    fn an_unnamed_question_is_withdrawn_when_every_candidate_ended() {
        let f = InFlight::default();
        let a = f.begin(scope("a"));
        let b = f.begin(scope("b"));
        let q = f.asker(None, None).expect("a call is in flight");
        // A call that began after the question cannot have asked it.
        let c = f.begin(scope("c"));
        f.end(a);
        assert!(!q.withdrawn.is_cancelled());
        f.end(b);
        assert!(q.withdrawn.is_cancelled());
        f.answered(q.id, asked("x"));
        assert!(f.end(c).interactions.is_empty());
    }

    #[test]
    fn an_answer_whose_filed_call_ended_goes_to_a_candidate_in_flight() {
        let f = InFlight::default();
        let a = f.begin(scope("a"));
        let b = f.begin(scope("b"));
        let q = f.asker(None, None).expect("a call is in flight");
        assert_eq!(q.scope.node.as_deref(), Some("a"));
        assert!(f.end(a).interactions.is_empty());
        f.answered(q.id, asked("a?"));
        assert_eq!(f.end(b).interactions, [asked("a?")]);
    }

    #[test]
    fn a_lone_node_is_named_without_doubt() {
        let f = InFlight::default();
        // Two iterations of one fan-out node.
        let a1 = f.begin(scope("a"));
        let a2 = f.begin(scope("a"));
        let q = f.asker(None, None).expect("a call is in flight");
        assert!(q.candidates.is_empty());
        assert_eq!(q.scope.node.as_deref(), Some("a"));
        f.end(a1);
        assert!(!q.withdrawn.is_cancelled());
        f.end(a2);
        assert!(q.withdrawn.is_cancelled());
    }
}
