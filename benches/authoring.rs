//! Authoring with the servers' help (issue 34):
//!
//! - completion latency with cached tool lists: a 200-tool server and a
//!   2,000-line file, at a tool name, an argument key and a reference path
//!   near the end of the file (goal: ≤ 20 ms each);
//! - preflight as you type on a 2,000-node file: one keystroke, the file
//!   validated and preflight run on it (every edit, no debounce: the worst
//!   case), through the workbench's own `App`, and a check that 200 keys
//!   typed that way all reach the buffer (no keystroke dropped).
//!
//!   cargo bench --bench authoring

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::json;

use pipewright::engine::author::Knowledge;
use pipewright::engine::author::complete::complete;
use pipewright::engine::diag::Pos;
use pipewright::engine::file::loader::load_native_str;
use pipewright::engine::mcp::ToolInfo;
use pipewright::engine::plan::preflight::{self, ToolLists};
use pipewright::ui::{App, Config, Dirs, Editor, Keymap, Options, Theme};

const TOOLS: usize = 200;

/// One server listing 200 tools, each with four arguments (one an enum)
/// and an output schema.
fn tool_lists() -> ToolLists {
    let tools = (0..TOOLS)
        .filter_map(|i| {
            ToolInfo::from_json(json!({
                "name": format!("tool_{i:03}"),
                "description": format!("Tool number {i}: does thing {i} to a record."),
                "inputSchema": {"type": "object", "required": ["name"],
                    "properties": {
                        "name": {"type": "string", "description": "The record's name"},
                        "limit": {"type": "integer"},
                        "mode": {"type": "string", "enum": ["fast", "slow", "exact"]},
                        "note": {"type": "string"}}},
                "outputSchema": {"type": "object", "properties": {
                    "name": {"type": "string"},
                    "items": {"type": "array", "items": {"type": "object",
                        "properties": {"id": {"type": "string"}, "score": {"type": "number"}}}},
                    "meta": {"type": "object", "properties": {"stars": {"type": "integer"}}}}}
            }))
        })
        .collect();
    let mut lists = ToolLists::new();
    lists.insert("demo".into(), tools);
    lists
}

/// A pipe of `nodes` eight-line nodes, each reading the one before.
fn file(nodes: usize) -> String {
    let mut s = String::from("pipe:\n");
    for i in 0..nodes {
        let (name, note) = if i >= 2 {
            (
                format!("\"${{n{}.name}}\"", i - 1),
                format!("from ${{n{}.meta.stars}} stars", i - 2),
            )
        } else {
            ("first".to_owned(), "none".to_owned())
        };
        let _ = write!(
            s,
            "  - id: n{i}\n    tool: tool_{:03}\n    args:\n      name: {name}\n      limit: 5\n      mode: fast\n      note: {note}\n    on_error: continue\n",
            i % TOOLS,
        );
    }
    s
}

fn completion(c: &mut Criterion) {
    let lists = tool_lists();
    let base = file(250);
    assert_eq!(base.lines().count(), 2001);
    let loaded = load_native_str(&base);
    assert!(!loaded.has_errors(), "{:?}", loaded.diagnostics);
    let pipeline = loaded.pipeline.expect("the generated file loads");
    let none = |_: &str| None;
    let k = Knowledge {
        pipeline: Some(&pipeline),
        tools: &lists,
        default_server: Some("demo"),
        output: &none,
    };
    // Each place in a node written at the end of the file.
    let places = [
        ("tool name", "  - id: last\n    tool: tool_1"),
        (
            "argument key",
            "  - id: last\n    tool: tool_001\n    args:\n      ",
        ),
        (
            "reference path",
            "  - id: last\n    tool: tool_001\n    args:\n      name: \"${n240.",
        ),
    ];
    for (what, tail) in places {
        let text = format!("{base}{tail}");
        let line = tail.rsplit('\n').next().unwrap_or(tail);
        let at = Pos::new(
            u32::try_from(text.lines().count()).unwrap(),
            u32::try_from(line.chars().count() + 1).unwrap(),
        );
        let got = complete(&text, at, &k).expect("something to complete");
        assert!(!got.items.is_empty());
        c.bench_function(
            &format!("complete: {what}, {TOOLS} tools, 2,000-line file"),
            |b| b.iter(|| complete(&text, at, &k)),
        );
    }
}

/// A 2,000-node pipe: what preflight checks on every edit.
fn preflight_as_you_type(c: &mut Criterion) {
    let lists = tool_lists();
    let text = file(2_000);
    let loaded = load_native_str(&text);
    assert!(!loaded.has_errors(), "{:?}", loaded.diagnostics);
    let pipeline = loaded.pipeline.expect("loads");
    let comp = &pipeline.compositions[0];
    c.bench_function("preflight: 2,000 nodes, 200 tools", |b| {
        b.iter(|| {
            preflight::check(
                &[(comp, pipeline.vars.clone())],
                &lists,
                Some("demo"),
                &Default::default(),
            )
        })
    });

    // The workbench's own path: a key, then the validation the editor would
    // run after it and the preflight that follows, every time.
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("big.yml");
    std::fs::write(&path, &text).expect("write");
    let editor = Editor::open(&path, None).expect("open");
    let config = Config {
        theme: Theme::dark(),
        keymap: Keymap::default(),
    };
    let opts = Options {
        file: path.clone(),
        ..Options::default()
    };
    let dirs = Dirs::new(
        Some(dir.path().join("config")),
        Some(dir.path().join("data")),
    );
    let mut app = App::new(opts, dirs, config, editor);
    let first = app.editor_mut().validate_now().expect("validates");
    app.on_validated(&first);
    app.on_session_tools(lists.clone());
    app.on_validated(&first);
    assert!(
        app.preflight().is_some(),
        "preflight ran on the 2,000-node plan"
    );
    app.on_key(KeyEvent::new(KeyCode::Char('i'), KeyModifiers::NONE));
    // Into the last node's note.
    app.editor_mut().goto(text.lines().count() - 1, 30);
    let typed = |app: &mut App, c: char| {
        app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE));
        let loaded = app.editor_mut().validate_now().expect("validates");
        app.on_validated(&loaded);
    };
    c.bench_function("workbench: keystroke alone, 2,000 nodes", |b| {
        let mut toggle = false;
        b.iter(|| {
            toggle = !toggle;
            let code = if toggle {
                KeyCode::Char('x')
            } else {
                KeyCode::Backspace
            };
            app.on_key(KeyEvent::new(code, KeyModifiers::NONE));
        })
    });
    // What the UI thread does when the editor's background validation
    // comes back: adopt the plan and run preflight on it.
    let loaded = app.editor_mut().validate_now().expect("validates");
    c.bench_function(
        "workbench: a validation adopted + preflight (UI thread), 2,000 nodes",
        |b| b.iter(|| app.on_validated(&loaded)),
    );
    c.bench_function(
        "workbench: keystroke + validation + preflight, 2,000 nodes",
        |b| {
            let mut toggle = false;
            b.iter(|| {
                toggle = !toggle;
                if toggle {
                    typed(&mut app, 'x');
                } else {
                    app.on_key(KeyEvent::new(KeyCode::Backspace, KeyModifiers::NONE));
                    let loaded = app.editor_mut().validate_now().expect("validates");
                    app.on_validated(&loaded);
                }
            })
        },
    );

    // No keystroke dropped: 200 keys, each followed by validation and
    // preflight, all in the buffer and in the plan preflight checked.
    let before = app.editor().text();
    let mut worst = Duration::ZERO;
    let word: String = (0..200).map(|i| (b'a' + (i % 26) as u8) as char).collect();
    for ch in word.chars() {
        let t = Instant::now();
        typed(&mut app, ch);
        worst = worst.max(t.elapsed());
    }
    let after = app.editor().text();
    assert_eq!(after.len(), before.len() + 200, "a keystroke was dropped");
    assert!(
        after.contains(&word),
        "the keys are not in order in the buffer"
    );
    assert!(app.preflight().is_some());
    println!(
        "workbench: 200 keys typed into a 2,000-node file, each validated and preflighted: none dropped, slowest {worst:?}"
    );
}

criterion_group!(benches, completion, preflight_as_you_type);
criterion_main!(benches);
