use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::{HistoryEffect, HistoryView};
use crate::keys::Action;
use pipewright_engine::run::store::Entry;

fn key(c: KeyCode) -> KeyEvent {
    KeyEvent::new(c, KeyModifiers::NONE)
}

fn runs(ids: &[&str]) -> HistoryView {
    let entries = ids
        .iter()
        .map(|id| Entry {
            id: (*id).to_owned(),
            ..Entry::default()
        })
        .collect();
    HistoryView::new(entries, None)
}

#[test]
fn keys_move_the_selection_and_ask_for_the_chosen_run() {
    let mut h = runs(&["r3", "r2", "r1"]);
    assert_eq!(
        h.key_effect(key(KeyCode::Char('j')), None),
        HistoryEffect::Stay
    );
    assert_eq!(h.selected, 1);
    assert_eq!(h.key_effect(key(KeyCode::End), None), HistoryEffect::Stay);
    assert_eq!(h.selected, 2);
    assert_eq!(
        h.key_effect(key(KeyCode::Char('k')), None),
        HistoryEffect::Stay
    );
    let r2 = h.chosen().cloned().expect("a run is chosen");
    assert_eq!(r2.id, "r2");
    assert_eq!(
        h.key_effect(key(KeyCode::Enter), None),
        HistoryEffect::Open(r2.clone())
    );
    assert_eq!(
        h.key_effect(key(KeyCode::Char('d')), None),
        HistoryEffect::Diff(r2.clone())
    );
    assert_eq!(
        h.key_effect(key(KeyCode::F(5)), Some(Action::Run)),
        HistoryEffect::Rerun(r2.clone())
    );
    assert_eq!(
        h.key_effect(key(KeyCode::Char('J')), Some(Action::Judge)),
        HistoryEffect::Judge(Some("r2".into()))
    );
    assert_eq!(h.key_effect(key(KeyCode::Esc), None), HistoryEffect::Close);
}

/// `E` asks for the format in a choice over the list (review item 4: the
/// status line's version was cut at 80 columns); the list's own keys stay
/// the list's.
#[test]
fn export_asks_for_the_format_in_a_choice() {
    let mut h = runs(&["r1", "r2"]);
    assert_eq!(
        h.key_effect(key(KeyCode::Char('E')), None),
        HistoryEffect::ChooseExport(h.chosen().cloned().unwrap())
    );
    // No key is held back for a format: `j` moves down.
    assert_eq!(
        h.key_effect(key(KeyCode::Char('j')), None),
        HistoryEffect::Stay
    );
    assert_eq!(h.chosen().map(|e| e.id.as_str()), Some("r2"));
}

#[test]
fn an_empty_list_closes_on_enter_and_stays_on_export() {
    let mut h = runs(&[]);
    assert_eq!(
        h.key_effect(key(KeyCode::Char('E')), None),
        HistoryEffect::Stay
    );
    assert_eq!(
        h.key_effect(key(KeyCode::Enter), None),
        HistoryEffect::Close
    );
    assert_eq!(
        h.key_effect(key(KeyCode::F(5)), Some(Action::Run)),
        HistoryEffect::Stay
    );
}

/// A durable run's id is 32 characters (`…-<16 hex>`): the list's columns stay in line
/// with the local runs' (issue 48, item 24).
#[test]
fn a_durable_runs_longer_id_keeps_the_columns_in_line() {
    let h = runs(&["20261129-024808-5cd80123456789ab", "20261129-024808-5cd8"]);
    let rows: Vec<String> = h
        .rows(&crate::theme::Theme::dark(), 120)
        .iter()
        .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
        .collect();
    let widths: Vec<usize> = rows.iter().map(|r| r.chars().count()).collect();
    assert_eq!(
        widths[0], widths[1],
        "the columns after the id in line: {rows:#?}"
    );
    assert!(
        rows[1].starts_with(" 20261129-024808-5cd8              "),
        "{rows:#?}"
    );
}
