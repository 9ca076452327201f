use serde_json::json;

use super::*;
use crate::lang::reference::Segment;
use crate::record::draft::{Piece, Rule, Template};
use crate::record::merge;
use crate::record::testing::{Script, result_of, tool};

fn session(query: &str, pick: usize) -> Recording {
    let mut s = Script::new(
        "2025-11-25",
        vec![tool("search_users", json!({"query": {"type": "string"}}))],
    );
    let users: Vec<Value> = (1..=3)
        .map(|i| json!({"id": format!("u{i}{query}"), "email": format!("{query}{i}@example.com")}))
        .collect();
    s.call(
        "search_users",
        json!({"query": query}),
        json!({"users": users, "count": 3}),
    );
    for u in &users {
        s.call(
            "get_user_details",
            json!({"user_id": u["id"]}),
            json!({"id": u["id"], "plan": "pro"}),
        );
    }
    s.call_asking(
        "confirm_send",
        json!({"to": users[pick]["email"]}),
        &[(
            "elicitation/create",
            json!({"message": "Send?", "requestedSchema": {"type": "object"}}),
            json!({"action": "accept", "content": {"send": true}}),
        )],
        result_of(json!({"action": "accept", "send": true})),
    );
    s.call(
        "send_email",
        json!({"to": users[pick]["email"], "subject": "Hello"}),
        json!({"message_id": "msg-000042", "status": "queued"}),
    );
    let mut r = s.recording();
    r.source = format!("{query}.jsonl");
    r
}

#[tokio::test]
async fn an_inferred_pipeline_replays_the_recording() {
    let (mut d, recs) = merge::draft(vec![session("al", 0)], "t").unwrap();
    let before = d.references();
    let proof = prove(&mut d, &recs).await.unwrap();
    assert_eq!(proof.fallback, None);
    assert!(proof.demoted.is_empty(), "{:?}", proof.demoted);
    assert_eq!((proof.replays, proof.calls), (1, 6));
    assert_eq!(d.references(), before);
    assert!(d.steps[1].for_each.is_some());
}

#[tokio::test]
async fn a_reference_that_does_not_give_the_recorded_value_is_demoted() {
    let (mut d, recs) = merge::draft(vec![session("al", 0)], "t").unwrap();
    let leaf = d.steps[3]
        .leaves
        .iter_mut()
        .find(|l| l.path == [Segment::Field("to".into())])
        .unwrap();
    // As if a rule had picked the second user.
    leaf.choice = Choice::Inferred {
        rule: Rule::ItemField,
        confidence: crate::record::draft::Confidence::Guess,
        template: Template::one(Piece::Out {
            step: 0,
            path: vec![
                Segment::Field("users".into()),
                Segment::Index(1),
                Segment::Field("email".into()),
            ],
        }),
        how: "a wrong guess".into(),
    };
    let proof = prove(&mut d, &recs).await.unwrap();
    assert_eq!(proof.fallback, None);
    assert_eq!(proof.demoted.len(), 1, "{:?}", proof.demoted);
    assert!(
        proof.demoted[0].starts_with("send_email.to (item-field): it gives \"al2@example.com\" where \"al1@example.com\" was recorded"),
        "{:?}",
        proof.demoted
    );
    let text = emit::pipeline(&d, "c.json", None);
    assert!(
        text.contains("# pipewright: item-field found a source for `to`, but it did not replay"),
        "{text}"
    );
}

#[tokio::test]
async fn a_draft_that_cannot_be_proved_falls_back_to_the_recorded_literals() {
    let (mut d, recs) = merge::draft(vec![session("al", 0)], "t").unwrap();
    // A fan-out over the wrong list cannot be demoted leaf by leaf.
    d.steps[1].for_each = Some(Template::one(Piece::Out {
        step: 0,
        path: vec![Segment::Field("nope".into())],
    }));
    let proof = prove(&mut d, &recs).await.unwrap();
    let why = proof.fallback.clone().unwrap();
    assert!(why.contains("for_each of `get_user_details`"), "{why}");
    assert_eq!(d.steps.len(), 6);
    assert!(d.references().is_empty());
    assert_eq!(proof.replays, 1);
}

#[tokio::test]
async fn several_recordings_replay_as_their_case_rows() {
    let (mut d, recs) = merge::draft(vec![session("al", 0), session("bo", 0)], "t").unwrap();
    assert_eq!(d.cases.len(), 2);
    let proof = prove(&mut d, &recs).await.unwrap();
    assert_eq!(proof.fallback, None, "{proof:?}");
    assert_eq!(proof.replays, 2);
    assert_eq!(proof.calls, 12);
}

#[tokio::test]
async fn text_that_looks_like_a_reference_replays_as_written() {
    let mut s = Script::new("2025-11-25", Vec::new());
    s.call(
        "echo",
        json!({"message": "costs ${price}", "n": 3}),
        json!({"message": "costs ${price}"}),
    );
    s.call(
        "echo",
        json!({"message": "say ${x} and costs ${price}"}),
        json!({"message": "ok"}),
    );
    let (mut d, recs) = merge::draft(vec![s.recording()], "t").unwrap();
    let proof = prove(&mut d, &recs).await.unwrap();
    assert_eq!(
        proof.fallback,
        None,
        "{proof:?}\n{}",
        emit::pipeline(&d, "c.json", None)
    );
    assert!(proof.demoted.is_empty(), "{proof:?}");
}
