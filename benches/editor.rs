//! The editor pane's typing latency: one keystroke plus the frame that shows
//! it, in a 3,000-line file (goal: well under a 16 ms frame).

use std::fmt::Write as _;

use criterion::{Criterion, criterion_group, criterion_main};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use pipewright::ui::{Editor, Theme};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

fn big_file(nodes: usize) -> String {
    let mut s = String::from("pipe:\n");
    for i in 0..nodes {
        let _ = write!(
            s,
            "  - id: n{i}\n    tool: fetch_metadata\n    args:\n      name: \"${{n{}.name}}\"\n      note: from ${{n{}.meta.stars}} stars\n",
            i.saturating_sub(1),
            i.saturating_sub(2)
        );
    }
    s
}

fn keystroke_and_frame(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("big.yml");
    std::fs::write(&path, big_file(600)).expect("write");
    let mut editor = Editor::open(&path, None).expect("open");
    let theme = Theme::dark();
    let area = Rect::new(0, 0, 120, 40);
    let mut buf = Buffer::empty(area);
    editor.goto(1500, 10);
    editor.render(area, &mut buf, &theme, true);
    let type_x = KeyEvent::new(KeyCode::Char('x'), KeyModifiers::NONE);
    let backspace = KeyEvent::new(KeyCode::Backspace, KeyModifiers::NONE);
    c.bench_function("editor: keystroke + frame, 3,000 lines", |b| {
        let mut toggle = false;
        b.iter(|| {
            toggle = !toggle;
            editor.handle_key(if toggle { type_x } else { backspace });
            editor.render(area, &mut buf, &theme, true);
        })
    });
    c.bench_function("editor: frame only, 3,000 lines", |b| {
        b.iter(|| editor.render(area, &mut buf, &theme, true))
    });
}

criterion_group!(benches, keystroke_and_frame);
criterion_main!(benches);
