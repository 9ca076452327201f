use serde_json::json;

use super::*;
use crate::record::testing::{Script, tool};

fn run(query: &str, id: &str, subject: &str) -> Recording {
    let mut s = Script::new("2025-11-25", vec![tool("search_users", json!({}))]);
    s.call(
        "search_users",
        json!({"query": query}),
        json!({"users": [{"id": id, "email": format!("{query}@example.com")}]}),
    );
    s.call(
        "send_email",
        json!({"to": format!("{query}@example.com"), "subject": subject}),
        json!({"status": "queued"}),
    );
    let mut r = s.recording();
    r.source = format!("{query}.jsonl");
    r
}

#[test]
fn one_recording_is_one_draft_with_its_expectations() {
    let (d, recs) = draft(vec![run("alice", "u1", "Hi")], "task").unwrap();
    assert_eq!(recs.len(), 1);
    assert_eq!(d.name, "task");
    assert_eq!(d.steps.len(), 2);
    assert_eq!(d.output, Some(1));
    // With inputs, what the recording ended with is its own case row's.
    assert!(d.expect.is_empty());
    assert_eq!(d.cases.len(), 1);
    assert_eq!(d.cases[0].name, "alice");
    assert_eq!(d.cases[0].vars["QUERY"], json!("alice"));
    assert_eq!(
        d.cases[0].expect,
        [("output.status".to_owned(), json!({"exact": "queued"}))]
    );
    assert!(d.vars.contains_key("QUERY") && d.vars.contains_key("SUBJECT"));
    assert!(
        matches!(d.servers.get("demo"), Some(ServerOut::Stdio { command, .. }) if command == "pipewright")
    );
}

#[test]
fn values_that_differ_become_inputs_and_values_that_agree_stay_literals() {
    let (d, _) = draft(
        vec![run("alice", "u1", "Hi"), run("bob", "u2", "Hi")],
        "task",
    )
    .unwrap();
    assert_eq!(d.vars.keys().collect::<Vec<_>>(), ["QUERY"]);
    let subject = &d.steps[1].leaves[1];
    assert_eq!(subject.choice, Choice::Literal);
    let to = &d.steps[1].leaves[0];
    assert!(matches!(&to.choice, Choice::Inferred { .. }), "{to:?}");
    assert_eq!(d.cases.len(), 2);
    assert_eq!(d.cases[1].name, "bob");
    assert_eq!(d.cases[1].vars["QUERY"], json!("bob"));
    assert!(d.expect.is_empty());
    assert_eq!(
        d.cases[0].expect,
        [("output.status".to_owned(), json!({"exact": "queued"}))]
    );
}

#[test]
fn recordings_that_diverge_are_refused_naming_the_call() {
    let mut other = Script::new("2025-11-25", Vec::new());
    other.call("search_users", json!({"query": "x"}), json!({"users": []}));
    other.call("delete_user", json!({"user_id": "u1"}), json!({"ok": true}));
    let mut other = other.recording();
    other.source = "other.jsonl".into();
    let e = draft(vec![run("alice", "u1", "Hi"), other], "t").unwrap_err();
    let e = e.to_string();
    assert!(e.starts_with("other.jsonl:"), "{e}");
    assert!(
        e.contains("call 2 differs")
            && e.contains("`delete_user` where alice.jsonl called `send_email`"),
        "{e}"
    );
    let mut short = Script::new("2025-11-25", Vec::new());
    short.call("search_users", json!({"query": "x"}), json!({"users": []}));
    let short = short.recording();
    let e = draft(vec![run("alice", "u1", "Hi"), short], "t")
        .unwrap_err()
        .to_string();
    assert!(e.contains("make 2 and 1 calls"), "{e}");
}

#[test]
fn a_recording_without_calls_is_an_error() {
    let r = Script::new("2025-11-25", Vec::new()).recording();
    assert!(matches!(draft(vec![r], "t"), Err(MergeError::NoCalls(_))));
    assert_eq!(draft(Vec::new(), "t").unwrap_err(), MergeError::Empty);
}

#[test]
fn recordings_of_several_servers_are_one_task_in_call_order() {
    let mut users = Script::new("2025-11-25", Vec::new());
    users.call(
        "search_users",
        json!({"query": "alice"}),
        json!({"users": [{"email": "alice@example.com"}]}),
    );
    let users = users.recording();
    let mut mail = Script::new("2025-11-25", Vec::new());
    mail.call(
        "send_email",
        json!({"to": "alice@example.com"}),
        json!({"status": "queued"}),
    );
    let mut mail = mail.recording();
    if let Some(h) = mail.header.as_mut() {
        h.server = Server::Http {
            name: "mail".into(),
            url: "http://127.0.0.1:9/mcp?key=***".into(),
        };
        h.started = "2026-11-29T02:00:01Z".into();
    }
    for c in &mut mail.calls {
        c.server = "mail".into();
    }
    let (d, recs) = draft(vec![mail, users], "t").unwrap();
    assert_eq!(recs.len(), 1);
    let order: Vec<(&str, &str)> = d
        .steps
        .iter()
        .map(|s| (s.server.as_str(), s.tool.as_str()))
        .collect();
    assert_eq!(order, [("demo", "search_users"), ("mail", "send_email")]);
    assert_eq!(d.references().len(), 1);
    assert_eq!(
        d.servers.get("mail"),
        Some(&ServerOut::Http {
            url: "http://127.0.0.1:9/mcp?key=${env.MAIL_SECRET}".into(),
            headers: Vec::new()
        })
    );
    assert_eq!(d.servers.len(), 2);
}

#[test]
fn without_inputs_the_expectations_are_the_pipelines() {
    let mut s = Script::new("2025-11-25", Vec::new());
    s.call("call_counts", json!({}), json!({"in_flight": 0}));
    let (d, _) = draft(vec![s.recording()], "t").unwrap();
    assert!(d.cases.is_empty());
    assert_eq!(
        d.expect,
        [("output.in_flight".to_owned(), json!({"exact": 0}))]
    );
}
