//! Questions servers ask in the middle of a call, waiting in the workbench:
//! a queue of them (the first is shown in a modal, "1 of 2"), each with the
//! state of its form, link or sampling reply, and the one-shot channel its
//! call waits on. Keys come in as the keymap's `ask-*` actions (editing keys
//! go to the focused text); an answer leaves only once it fits the question.
//!
//! [`Asks`] is the modal as a component: the queue turns keys into
//! messages the app carries out (`app/questions.rs`); `view` draws it.

mod form;
pub(crate) mod responder;
mod sample;
mod text;
mod view;

use std::collections::VecDeque;

use crossterm::event::KeyEvent;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use serde_json::Value;
use tokio::sync::oneshot;

use pipewright_engine::mcp::human::{Answer, Ask, Question, Reply, Source};

use crate::component::{Component, Ctx, Handled, Queue};
use crate::keys::{Action, Keymap};
use crate::msg::Msg;
use form::Form;
use sample::Sample;

/// What the modal holds for one question.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum State {
    /// A form to fill in.
    Form(Form),
    /// A link to open, and what became of asking the browser to.
    Url { opened: Opened },
    /// A model reply to write.
    Sample(Sample),
}

/// What became of asking the browser to open a question's link: the
/// modal says what really happened, as the status line does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Opened {
    /// Not asked yet.
    No,
    /// Asked; the opener has not been started yet.
    Asking,
    /// The opener (`xdg-open`, `open`) was started.
    Started(String),
    /// It could not be started: why.
    Failed(String),
}

/// One open question.
#[derive(Debug)]
pub(crate) struct Pending {
    question: Question,
    state: State,
    /// Names this question to the provider's answer.
    ticket: u64,
    reply: Option<oneshot::Sender<Answer>>,
}

impl Pending {
    /// What the server asks.
    #[cfg(test)]
    pub(crate) fn question(&self) -> &Question {
        &self.question
    }

    /// What the modal holds for it.
    #[cfg(test)]
    pub(crate) fn state(&self) -> &State {
        &self.state
    }

    /// Whether the call still waits for the answer.
    fn waiting(&self) -> bool {
        self.reply.as_ref().is_some_and(|r| !r.is_closed())
    }
}

/// What a key in the modal asks the app to do.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Outcome {
    /// Nothing beyond redrawing.
    Nothing,
    /// The question of node `node` was answered with `action`.
    Answered {
        node: Option<String>,
        action: &'static str,
    },
    /// Ask the sampling provider for question `ticket`.
    AskProvider { ticket: u64, request: Value },
    /// Open this link in the browser.
    OpenUrl(String),
    /// Copy this link to the clipboard.
    CopyUrl(String),
    /// The key cannot do what it asks: the modal shows why, and the
    /// status line and Messages say it too.
    Refused(String),
}

/// The questions waiting for the person, oldest first.
#[derive(Debug, Default)]
pub(crate) struct Asks {
    queue: VecDeque<Pending>,
    next_ticket: u64,
    /// A question waits but its modal is hidden (F2), so the person can
    /// look at the nodes before answering.
    hidden: bool,
}

impl Asks {
    /// Whether the modal is hidden (F2): a question may wait behind it.
    pub(crate) fn is_hidden(&self) -> bool {
        self.hidden
    }

    /// Hides the modal so the person can look at the nodes first.
    pub(crate) fn hide(&mut self) {
        self.hidden = true;
    }

    /// Shows the modal again (when a question waits).
    pub(crate) fn unhide(&mut self) {
        self.hidden = false;
    }

    /// Whether the shown question asks for a model's reply (Enter breaks
    /// its lines; another key sends it).
    pub(crate) fn sampling(&self) -> bool {
        matches!(self.current().map(|p| &p.state), Some(State::Sample(_)))
    }

    /// Whether the shown question asks the person to open a link.
    pub(crate) fn asking_url(&self) -> bool {
        matches!(self.current().map(|p| &p.state), Some(State::Url { .. }))
    }

    /// Queues a question; its call waits on `reply`.
    pub(crate) fn push(&mut self, question: Question, reply: oneshot::Sender<Answer>) {
        let state = match &question.ask {
            Ask::Form { schema, .. } => State::Form(Form::new(schema)),
            Ask::Url { .. } => State::Url { opened: Opened::No },
            Ask::Sample { request } => State::Sample(Sample::new(request.clone())),
        };
        self.next_ticket += 1;
        self.queue.push_back(Pending {
            question,
            state,
            ticket: self.next_ticket,
            reply: Some(reply),
        });
    }

    /// Whether the modal is on screen: a question waits and is not
    /// hidden. It then takes the keys.
    pub(crate) fn shown(&self) -> bool {
        !self.is_empty() && !self.hidden
    }

    /// The question shown in the modal.
    pub(crate) fn current(&self) -> Option<&Pending> {
        self.queue.front()
    }

    /// The first question's link was (or could not be) handed to the
    /// browser.
    pub(crate) fn url_opened(&mut self, result: Result<String, String>) {
        if let Some(State::Url { opened }) = self.queue.front_mut().map(|p| &mut p.state) {
            *opened = match result {
                Ok(opener) => Opened::Started(opener),
                Err(e) => Opened::Failed(e),
            };
        }
    }

    /// How many questions wait (the shown one included).
    pub(crate) fn len(&self) -> usize {
        self.queue.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Whether a question of node `id` waits.
    pub(crate) fn asks_node(&self, id: &str) -> bool {
        self.queue
            .iter()
            .any(|p| p.question.node.as_deref() == Some(id))
    }

    /// Answers the shown question and takes it off the queue.
    fn answer(&mut self, answer: Answer) -> Outcome {
        let Some(mut p) = self.queue.pop_front() else {
            return Outcome::Nothing;
        };
        let action = answer.reply.action();
        if let Some(tx) = p.reply.take() {
            // The call may have ended meanwhile (timeout, cancel): then no
            // one listens, and that is fine.
            let _ = tx.send(answer);
        }
        Outcome::Answered {
            node: p.question.node,
            action,
        }
    }

    /// Answers every waiting question `cancel` (the session is dropped or
    /// the workbench quits); the nodes that were asking.
    pub(crate) fn cancel_all(&mut self, why: &str) -> Vec<String> {
        let mut nodes = Vec::new();
        while let Some(mut p) = self.queue.pop_front() {
            if let Some(tx) = p.reply.take() {
                let _ = tx.send(responder::cancelled(why));
            }
            nodes.extend(p.question.node);
        }
        nodes
    }

    /// Drops the questions whose call stopped waiting (it timed out or was
    /// cancelled); the nodes they were for.
    pub(crate) fn prune(&mut self) -> Vec<String> {
        let mut gone = Vec::new();
        self.queue.retain(|p| {
            let keep = p.waiting();
            if !keep {
                gone.extend(p.question.node.clone());
            }
            keep
        });
        gone
    }

    /// Node `id` finished: it no longer may be asking. A question that
    /// named no call and was filed under it moves to the first other node
    /// that may be asking, as the engine files its answer; the nodes whose
    /// `?` may have changed.
    pub(crate) fn node_ended(&mut self, id: &str) -> Vec<String> {
        let mut moved = Vec::new();
        for p in &mut self.queue {
            let q = &mut p.question;
            if !q.candidates.iter().any(|c| c == id) {
                continue;
            }
            q.candidates.retain(|c| c != id);
            if q.node.as_deref() == Some(id)
                && let Some(next) = q.candidates.first()
            {
                q.node = Some(next.clone());
                moved.push(next.clone());
            }
        }
        moved
    }

    /// The provider answered question `ticket`.
    pub(crate) fn provided(&mut self, ticket: u64, result: Result<(String, String), String>) {
        if let Some(p) = self.queue.iter_mut().find(|p| p.ticket == ticket)
            && let State::Sample(s) = &mut p.state
        {
            s.provided(result);
        }
    }

    /// Whether the shown question's focused input takes typed characters.
    pub(crate) fn typing(&self) -> bool {
        match self.current().map(|p| &p.state) {
            Some(State::Form(f)) => f.typing(),
            Some(State::Sample(_)) => true,
            _ => false,
        }
    }

    /// Text pasted while the modal is open: into the focused input.
    pub(crate) fn paste(&mut self, text: &str) {
        match self.queue.front_mut().map(|p| &mut p.state) {
            Some(State::Form(f)) => f.paste(text),
            Some(State::Sample(s)) => s.reply.insert(text),
            _ => {}
        }
    }

    /// A key while the modal is open. `provider` says whether a sampling
    /// provider is configured.
    pub(crate) fn key(&mut self, keymap: &Keymap, key: KeyEvent, provider: bool) -> Outcome {
        let action = keymap.modal_action(&key, self.typing());
        match action {
            Some(Action::AskCancel) => {
                return self.answer(Answer::new(Reply::Cancel, Source::Workbench));
            }
            Some(Action::AskDecline) => {
                return self.answer(Answer::new(Reply::Decline, Source::Workbench));
            }
            _ => {}
        }
        let Some(p) = self.queue.front_mut() else {
            return Outcome::Nothing;
        };
        match &mut p.state {
            State::Form(form) => match action {
                Some(Action::AskAccept) => match form.submit() {
                    Some(content) => {
                        self.answer(Answer::new(Reply::Accept(content), Source::Workbench))
                    }
                    None => Outcome::Nothing,
                },
                Some(Action::AskNextField) => {
                    form.move_focus(1);
                    Outcome::Nothing
                }
                Some(Action::AskPrevField) => {
                    form.move_focus(-1);
                    Outcome::Nothing
                }
                // A text field takes its editing keys (← → move the
                // cursor); a choice or yes/no field takes the choosing keys.
                _ if form.edit(key) => Outcome::Nothing,
                Some(Action::AskChoose) => {
                    form.choose(1);
                    Outcome::Nothing
                }
                Some(Action::AskChooseBack) => {
                    form.choose(-1);
                    Outcome::Nothing
                }
                _ => Outcome::Nothing,
            },
            State::Url { opened } => match (action, &p.question.ask) {
                (Some(Action::AskAccept), _) => {
                    self.answer(Answer::new(Reply::Accept(Value::Null), Source::Workbench))
                }
                (Some(Action::AskOpenUrl), Ask::Url { url, .. }) => {
                    *opened = Opened::Asking;
                    Outcome::OpenUrl(url.clone())
                }
                (Some(Action::AskCopyUrl), Ask::Url { url, .. }) => Outcome::CopyUrl(url.clone()),
                _ => Outcome::Nothing,
            },
            State::Sample(s) => match action {
                Some(Action::AskSend) => match s.answer() {
                    Some(a) => self.answer(a),
                    None => Outcome::Nothing,
                },
                Some(Action::AskProvider) if !provider => {
                    let why = "no sampling provider: set `sampling: {url, model, api_key}` in the file or in config.yaml";
                    s.error = Some(why.into());
                    Outcome::Refused(why.into())
                }
                Some(Action::AskProvider) if !s.waiting => {
                    s.waiting = true;
                    s.error = None;
                    Outcome::AskProvider {
                        ticket: p.ticket,
                        request: s.request.clone(),
                    }
                }
                _ => {
                    if s.reply.key(key) {
                        s.error = None;
                    }
                    Outcome::Nothing
                }
            },
        }
    }
}

impl Component for Asks {
    /// Every key while the modal is shown, but the two that leave it: the
    /// hide key (to look at the nodes first) and the quit chord.
    fn on_key(
        &mut self,
        key: KeyEvent,
        _action: Option<Action>,
        ctx: &Ctx<'_>,
        queue: &mut Queue,
    ) -> Handled {
        if ctx.keymap.modal_action(&key, false) == Some(Action::AskHide) {
            self.hide();
            let k = ctx.keymap.label(Action::Questions);
            queue.push(Msg::Say {
                text: format!("the question waits (its node shows ?): {k} brings it back"),
                error: false,
            });
            return Handled::Taken;
        }
        if ctx.keymap.action(&key, true) == Some(Action::Quit) {
            self.hide();
            queue.push(Msg::Act(Action::Quit));
            return Handled::Taken;
        }
        match self.key(ctx.keymap, key, ctx.provider.is_some()) {
            Outcome::Nothing => {}
            Outcome::Answered { node, action } => queue.push(Msg::Answered { node, action }),
            Outcome::OpenUrl(url) => queue.push(Msg::OpenUrl(url)),
            Outcome::CopyUrl(url) => queue.push(Msg::Copy {
                text: url,
                what: "the link".into(),
            }),
            Outcome::AskProvider { ticket, request } => {
                queue.push(Msg::AskProvider { ticket, request })
            }
            Outcome::Refused(text) => queue.push(Msg::Say { text, error: true }),
        }
        Handled::Taken
    }

    /// Pasted text goes into the focused input.
    fn on_paste(&mut self, text: &str, _queue: &mut Queue) -> Handled {
        self.paste(text);
        Handled::Taken
    }

    /// The shown question over the whole screen.
    fn draw(&mut self, area: Rect, buf: &mut Buffer, ctx: &Ctx<'_>) {
        self.render(ctx.provider, ctx.theme, ctx.keymap, area, buf);
    }
}

#[cfg(test)]
mod tests;
