//! One frame of the inspector pane showing a 5 MB output (goal: the whole
//! workbench frame under 8 ms, so this pane should take a small part of it),
//! and the one-off cost of showing such a record.

use criterion::{Criterion, criterion_group, criterion_main};
use pipewright::engine::run::trace::{NodeRecord, NodeStatus};
use pipewright::ui::{Inspector, Tab, Theme};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use serde_json::{Value, json};
use std::hint::black_box;

/// About 6 MB of JSON: 50,000 user objects.
fn big_record() -> NodeRecord {
    let output = Value::Array(
        (0..50_000)
            .map(|k| {
                json!({"id": k, "name": format!("user-{k}"), "email": format!("u{k}@example.com"),
                       "tags": ["a", "b"], "bio": format!("user {k} likes long walks")})
            })
            .collect(),
    );
    NodeRecord {
        status: NodeStatus::Ok,
        args: json!({"query": "", "limit": 50_000}).into(),
        output: output.into(),
        attempts: 1,
        duration_ms: 1_200,
        ..NodeRecord::default()
    }
}

fn bench(c: &mut Criterion) {
    let rec = big_record();
    let theme = Theme::dark();
    let area = Rect::new(0, 0, 100, 40);

    c.bench_function("inspector: show a 5 MB record (set_node)", |b| {
        b.iter(|| {
            let mut i = Inspector::new();
            i.set_node("big", None, Some(black_box(&rec)), None);
            i
        })
    });

    let shared = std::sync::Arc::new(rec.clone());
    c.bench_function(
        "inspector: show a shared 5 MB record (set_node_shared)",
        |b| {
            b.iter(|| {
                let mut i = Inspector::new();
                i.set_node_shared("big", None, Some(std::sync::Arc::clone(&shared)), None);
                i
            })
        },
    );

    let mut insp = Inspector::new();
    insp.set_node("big", None, Some(&rec), None);
    insp.set_tab(Tab::Output);
    let mut buf = Buffer::empty(area);
    c.bench_function("inspector: frame of a 5 MB output, 100x40", |b| {
        b.iter(|| {
            buf.reset();
            insp.render(area, &mut buf, &theme, true);
        })
    });

    // Expanded everything (capped), selection at the bottom.
    insp.handle_key(crossterm::event::KeyEvent::from(
        crossterm::event::KeyCode::Char('+'),
    ));
    insp.handle_key(crossterm::event::KeyEvent::from(
        crossterm::event::KeyCode::End,
    ));
    c.bench_function(
        "inspector: frame of a 5 MB output, expanded, at the end",
        |b| {
            b.iter(|| {
                buf.reset();
                insp.render(area, &mut buf, &theme, true);
            })
        },
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
