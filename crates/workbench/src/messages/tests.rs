use std::time::{Duration, Instant};

use super::{LOG_CAP, Messages};

#[test]
fn said_goes_to_the_status_line_and_the_log_noted_only_to_the_log() {
    let mut m = Messages::default();
    m.log_line("quiet".into(), false);
    assert!(m.status.is_none());
    m.say("loud".into(), true);
    assert_eq!(m.status.as_ref().map(|s| s.text.as_str()), Some("loud"));
    let texts: Vec<&str> = m.log.iter().map(|e| e.text.as_str()).collect();
    assert_eq!(texts, ["quiet", "loud"]);
    assert!(m.log[1].error);
}

#[test]
fn a_message_about_a_call_goes_when_that_call_ends_and_any_fades() {
    let mut m = Messages::default();
    m.say("a: retrying".into(), false);
    m.about("a");
    m.drop_about(Some("b"));
    assert!(m.status.is_some(), "another node's end leaves it");
    m.drop_about(Some("a"));
    assert!(m.status.is_none());
    m.say("saved".into(), false);
    m.drop_about(None);
    assert!(m.status.is_some(), "a message about no call stays");
    let at = m.status.as_ref().map(|s| s.at).expect("said");
    m.fade(at + Duration::from_secs(1));
    assert!(m.status.is_some());
    m.fade(Instant::now() + Duration::from_secs(7));
    assert!(m.status.is_none());
}

#[test]
fn the_log_keeps_its_newest_entries() {
    let mut m = Messages::default();
    for i in 0..LOG_CAP + 5 {
        m.log_line(format!("line {i}"), false);
    }
    assert_eq!(m.log.len(), LOG_CAP);
    assert_eq!(m.log[0].text, "line 5");
}
