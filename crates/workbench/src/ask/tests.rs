//! The question modal as a state machine: keys in, form state and answers
//! out, through the default keymap.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;
use tokio::sync::oneshot;

use super::form::Input;
use super::*;

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Your name"},
            "age": {"type": "integer", "minimum": 0, "description": "In years"},
            "plan": {"type": "string", "enum": ["free", "pro"], "enumNames": ["Free", "Pro"], "default": "free"},
            "agree": {"type": "boolean", "default": false},
            "email": {"type": "string", "format": "email"}
        },
        "required": ["name", "age"]
    })
}

fn question(node: &str, ask: Ask) -> Question {
    Question {
        server: "hitl".into(),
        node: Some(node.into()),
        candidates: Vec::new(),
        ask,
    }
}

fn form_question(node: &str) -> Question {
    question(
        node,
        Ask::Form {
            message: "Sign up".into(),
            schema: schema(),
        },
    )
}

fn asks_with(q: Question) -> (Asks, oneshot::Receiver<Answer>) {
    let mut asks = Asks::default();
    let (tx, rx) = oneshot::channel();
    asks.push(q, tx);
    (asks, rx)
}

fn press(asks: &mut Asks, code: KeyCode, mods: KeyModifiers) -> Outcome {
    asks.key(&Keymap::default(), KeyEvent::new(code, mods), false)
}

fn key(asks: &mut Asks, code: KeyCode) -> Outcome {
    press(asks, code, KeyModifiers::NONE)
}

fn typed(asks: &mut Asks, text: &str) {
    for c in text.chars() {
        key(asks, KeyCode::Char(c));
    }
}

fn form(asks: &Asks) -> &Form {
    match &asks.current().unwrap().state {
        State::Form(f) => f,
        other => panic!("not a form: {other:?}"),
    }
}

#[test]
fn defaults_are_filled_in_and_tab_goes_round_the_fields() {
    let (mut asks, _rx) = asks_with(form_question("who"));
    let f = form(&asks);
    assert_eq!(f.inputs[2], Input::Choice(Some(0)));
    assert_eq!(f.inputs[3], Input::Toggle(false));
    assert_eq!(f.focus, 0);
    for want in [1, 2, 3, 4, 0] {
        key(&mut asks, KeyCode::Tab);
        assert_eq!(form(&asks).focus, want);
    }
    press(&mut asks, KeyCode::BackTab, KeyModifiers::SHIFT);
    assert_eq!(form(&asks).focus, 4);
}

#[test]
fn typing_goes_to_the_focused_field_and_space_is_text_there() {
    let (mut asks, _rx) = asks_with(form_question("who"));
    typed(&mut asks, "Ada L");
    key(&mut asks, KeyCode::Left);
    key(&mut asks, KeyCode::Backspace);
    match &form(&asks).inputs[0] {
        Input::Text(t) => assert_eq!(t.text(), "AdaL"),
        other => panic!("{other:?}"),
    }
    // `o` is a modal key only in a URL question: here it is a letter.
    key(&mut asks, KeyCode::Char('o'));
    match &form(&asks).inputs[0] {
        Input::Text(t) => assert_eq!(t.text(), "AdaoL"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn choices_cycle_with_arrows_and_space_and_booleans_flip() {
    let (mut asks, _rx) = asks_with(form_question("who"));
    key(&mut asks, KeyCode::Tab);
    key(&mut asks, KeyCode::Tab);
    key(&mut asks, KeyCode::Right);
    assert_eq!(form(&asks).inputs[2], Input::Choice(Some(1)));
    key(&mut asks, KeyCode::Char(' '));
    assert_eq!(form(&asks).inputs[2], Input::Choice(Some(0)));
    key(&mut asks, KeyCode::Left);
    assert_eq!(form(&asks).inputs[2], Input::Choice(Some(1)));
    key(&mut asks, KeyCode::Tab);
    key(&mut asks, KeyCode::Char(' '));
    assert_eq!(form(&asks).inputs[3], Input::Toggle(true));
}

#[test]
fn enter_with_invalid_input_keeps_the_form_open_with_the_errors() {
    let (mut asks, mut rx) = asks_with(form_question("who"));
    typed(&mut asks, "Ada");
    key(&mut asks, KeyCode::Tab);
    typed(&mut asks, "-3");
    assert_eq!(key(&mut asks, KeyCode::Enter), Outcome::Nothing);
    let f = form(&asks);
    let err = f.errors[1].as_deref().unwrap_or_default();
    assert!(err.contains("minimum"), "{err}");
    assert_eq!(f.focus, 1, "the focus goes to the first bad field");
    // Nothing typed was lost, and nothing was sent.
    match &f.inputs[0] {
        Input::Text(t) => assert_eq!(t.text(), "Ada"),
        other => panic!("{other:?}"),
    }
    assert!(rx.try_recv().is_err());
    // A word where a whole number goes: the field says so.
    key(&mut asks, KeyCode::Backspace);
    key(&mut asks, KeyCode::Backspace);
    typed(&mut asks, "old");
    key(&mut asks, KeyCode::Enter);
    let err = form(&asks).errors[1].clone().unwrap_or_default();
    assert!(err.contains("whole number"), "{err}");
    // Fixed: it goes, with the default plan.
    for _ in 0..3 {
        key(&mut asks, KeyCode::Backspace);
    }
    typed(&mut asks, "36");
    let out = key(&mut asks, KeyCode::Enter);
    assert_eq!(
        out,
        Outcome::Answered {
            node: Some("who".into()),
            action: "accept"
        }
    );
    let a = rx.try_recv().unwrap();
    assert_eq!(a.by, Source::Workbench);
    assert_eq!(
        a.reply,
        Reply::Accept(json!({"name": "Ada", "age": 36, "plan": "free", "agree": false}))
    );
    assert!(asks.is_empty());
}

/// Review item 12: every field's problem is said at once, a format's with
/// a minimum's and a length's (before, the schema's rules waited until the
/// email read).
#[test]
fn every_problem_of_a_form_is_reported_at_once() {
    let schema = json!({
        "type": "object",
        "properties": {
            "email": {"type": "string", "format": "email"},
            "age": {"type": "integer", "minimum": 18},
            "code": {"type": "string", "minLength": 4}
        },
        "required": ["email", "age", "code"]
    });
    let (mut asks, _rx) = asks_with(question(
        "who",
        Ask::Form {
            message: "Register".into(),
            schema,
        },
    ));
    typed(&mut asks, "not-an-email");
    key(&mut asks, KeyCode::Tab);
    typed(&mut asks, "3");
    key(&mut asks, KeyCode::Tab);
    typed(&mut asks, "ab");
    assert_eq!(key(&mut asks, KeyCode::Enter), Outcome::Nothing);
    let f = form(&asks);
    let errs: Vec<&str> = f
        .errors
        .iter()
        .map(|e| e.as_deref().unwrap_or(""))
        .collect();
    assert!(errs[0].contains("email"), "{errs:?}");
    assert!(errs[1].contains("minimum"), "{errs:?}");
    assert!(errs[2].contains("shorter than 4"), "{errs:?}");
    assert_eq!(f.error, None, "the bad email is not also `required`");
    assert_eq!(f.focus, 0, "the focus goes to the first bad field");
}

/// Review item 12: Ctrl-U clears a field (the readline chords work in a
/// question's text fields).
#[test]
fn ctrl_u_clears_a_field() {
    let (mut asks, _rx) = asks_with(form_question("who"));
    typed(&mut asks, "Ada");
    press(&mut asks, KeyCode::Char('u'), KeyModifiers::CONTROL);
    match &form(&asks).inputs[0] {
        Input::Text(t) => assert_eq!(t.text(), ""),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_missing_required_field_is_an_error() {
    let (mut asks, _rx) = asks_with(form_question("who"));
    key(&mut asks, KeyCode::Enter);
    let f = form(&asks);
    assert!(f.errors[0].as_deref().unwrap().contains("required"));
    assert!(f.errors[1].as_deref().unwrap().contains("required"));
    assert_eq!(f.errors[2], None);
}

#[test]
fn esc_declines_and_ctrl_c_cancels() {
    let (mut asks, mut rx) = asks_with(form_question("who"));
    typed(&mut asks, "half-typed");
    key(&mut asks, KeyCode::Esc);
    assert_eq!(rx.try_recv().unwrap().reply, Reply::Decline);
    let (mut asks, mut rx) = asks_with(form_question("who"));
    press(&mut asks, KeyCode::Char('c'), KeyModifiers::CONTROL);
    assert_eq!(rx.try_recv().unwrap().reply, Reply::Cancel);
    assert!(asks.is_empty());
}

#[test]
fn questions_queue_and_come_one_after_the_other() {
    let (mut asks, mut first) = asks_with(form_question("a"));
    let (tx, mut second) = oneshot::channel();
    asks.push(
        question(
            "b",
            Ask::Url {
                message: "Confirm".into(),
                url: "http://x/confirm".into(),
                elicitation_id: "e1".into(),
            },
        ),
        tx,
    );
    assert_eq!(asks.len(), 2);
    assert!(asks.asks_node("b"));
    key(&mut asks, KeyCode::Esc);
    assert_eq!(first.try_recv().unwrap().reply, Reply::Decline);
    assert_eq!(asks.len(), 1);
    assert_eq!(
        key(&mut asks, KeyCode::Char('o')),
        Outcome::OpenUrl("http://x/confirm".into())
    );
    key(&mut asks, KeyCode::Enter);
    assert_eq!(second.try_recv().unwrap().reply, Reply::Accept(Value::Null));
    assert!(asks.is_empty());
}

#[test]
fn a_sampling_reply_is_written_with_newlines_and_sent_with_ctrl_s() {
    let request =
        json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]});
    let (mut asks, mut rx) = asks_with(question("s", Ask::Sample { request }));
    typed(&mut asks, "one");
    key(&mut asks, KeyCode::Enter);
    typed(&mut asks, "two");
    assert!(rx.try_recv().is_err());
    // No provider configured: asking for one says so and sends nothing.
    press(&mut asks, KeyCode::Char('g'), KeyModifiers::CONTROL);
    assert!(rx.try_recv().is_err());
    press(&mut asks, KeyCode::Char('s'), KeyModifiers::CONTROL);
    let a = rx.try_recv().unwrap();
    assert_eq!(
        a.reply,
        Reply::Sampled {
            text: "one\ntwo".into(),
            model: "human".into()
        }
    );
}

#[test]
fn the_provider_is_asked_once_and_its_reply_shown_for_approval() {
    let request = json!({"messages": []});
    let (mut asks, mut rx) = asks_with(question("s", Ask::Sample { request }));
    let ctrl_g = KeyEvent::new(KeyCode::Char('g'), KeyModifiers::CONTROL);
    let out = asks.key(&Keymap::default(), ctrl_g, true);
    let Outcome::AskProvider { ticket, .. } = out else {
        panic!("{out:?}")
    };
    assert_eq!(asks.key(&Keymap::default(), ctrl_g, true), Outcome::Nothing);
    asks.provided(ticket, Ok(("a summary".into(), "m1".into())));
    assert!(rx.try_recv().is_err(), "shown first, not sent");
    press(&mut asks, KeyCode::Char('s'), KeyModifiers::CONTROL);
    let a = rx.try_recv().unwrap();
    assert_eq!(a.by, Source::Provider);
}

#[test]
fn cancel_all_and_prune_leave_no_call_waiting() {
    let (mut asks, mut rx) = asks_with(form_question("a"));
    let (tx, rx2) = oneshot::channel();
    asks.push(form_question("b"), tx);
    drop(rx2);
    assert_eq!(asks.prune(), vec!["b".to_owned()]);
    assert_eq!(asks.cancel_all("bye"), vec!["a".to_owned()]);
    let a = rx.try_recv().unwrap();
    assert_eq!(a.reply, Reply::Cancel);
    assert!(asks.is_empty());
}

#[test]
fn a_question_of_a_finished_node_moves_to_the_other_candidate() {
    let mut q = form_question("a");
    q.candidates = vec!["a".into(), "b".into()];
    assert_eq!(q.who("").as_deref(), Some("one of: a, b"));
    let (mut asks, _rx) = asks_with(q);
    assert_eq!(asks.node_ended("c"), Vec::<String>::new());
    assert_eq!(asks.node_ended("a"), vec!["b".to_owned()]);
    let shown = &asks.current().expect("still open").question;
    assert_eq!(shown.node.as_deref(), Some("b"));
    assert_eq!(shown.who("").as_deref(), Some("node b"));
    assert!(asks.asks_node("b") && !asks.asks_node("a"));
}

#[test]
fn the_modal_is_shown_while_a_question_waits_unless_hidden() {
    assert!(!Asks::default().shown());
    let (mut asks, _rx) = asks_with(form_question("signup"));
    assert!(asks.shown());
    asks.hidden = true;
    assert!(!asks.shown());
    assert_eq!(asks.len(), 1, "hiding keeps the question waiting");
}
