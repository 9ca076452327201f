//! One full frame of the workbench (goal: under 8 ms): a 300-node DAG in the
//! DAG pane, a 5 MB output in the inspector, the editor on the 300-node file,
//! drawn into a 200x60 `TestBackend`. Layout and parsing happen once before
//! measuring, as in the app; what is measured is what every redraw costs.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::{Value, json};

use pipewright::engine::run::events::Event;
use pipewright::engine::run::trace::{NodeRecord, NodeStatus};
use pipewright::ui::{App, Config, Dirs, Editor, Keymap, Options, Tab, Theme};

/// 300 nodes in layers of 12; each needs one or two nodes of the layer
/// before it.
fn generate(n: usize) -> String {
    let width = 12;
    let mut s = String::from("compositions:\n  - name: big\n    nodes:\n");
    for i in 0..n {
        let _ = writeln!(s, "      - id: n{i}\n        tool: echo");
        if i >= width {
            let a = i - width;
            let b = i - width + (i * 7 + 3) % width;
            let b = b.min(i - 1);
            if a == b {
                let _ = writeln!(s, "        needs: [n{a}]");
            } else {
                let _ = writeln!(s, "        needs: [n{a}, n{b}]");
            }
            let _ = writeln!(s, "        args:\n          text: \"${{n{a}.text}}\"");
        } else {
            let _ = writeln!(s, "        args:\n          text: start");
        }
    }
    s
}

/// About 5 MB of JSON: 20,000 records with nested fields.
fn big_output() -> Value {
    let rows: Vec<Value> = (0..20_000)
        .map(|i| {
            json!({
                "id": i,
                "name": format!("package-{i}"),
                "description": "x".repeat(180),
                "tags": ["mcp", "tools", "pipeline"],
                "meta": {"stars": i * 3, "license": "MIT"}
            })
        })
        .collect();
    json!({ "results": rows, "total": 20_000 })
}

fn app() -> (tempfile::TempDir, App) {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("big.yml");
    std::fs::write(&file, generate(300)).expect("write");
    let editor = Editor::open(&file, None).expect("open");
    let config = Config {
        theme: Theme::dark(),
        keymap: Keymap::default(),
    };
    let opts = Options {
        file: file.clone(),
        ..Options::default()
    };
    let mut app = App::new(opts, Dirs::default(), config, editor);
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut now = Instant::now();
    while app.composition().is_none() && Instant::now() < deadline {
        now += Duration::from_millis(400);
        app.on_tick(now);
        std::thread::sleep(Duration::from_millis(5));
    }
    let comp = app
        .composition()
        .cloned()
        .expect("the generated file validates");
    // Half the nodes ran, one is running, the selected one has 5 MB.
    for (i, n) in comp.nodes.iter().enumerate().take(150) {
        let output = if i == 149 {
            big_output()
        } else {
            json!({"text": "ok"})
        };
        app.on_session(Event::NodeFinished {
            id: n.id.clone(),
            record: Box::new(NodeRecord {
                status: NodeStatus::Ok,
                output: output.into(),
                attempts: 1,
                ..NodeRecord::default()
            }),
        });
    }
    app.on_session(Event::NodeStarted {
        id: comp.nodes[150].id.clone(),
        attempt: 1,
        args: None,
    });
    app.select(Some(149), true);
    app.inspector_mut().set_tab(Tab::Output);
    // Let background work (pretty-printing, indexing) finish first.
    for _ in 0..200 {
        app.inspector_mut().poll();
        std::thread::sleep(Duration::from_millis(5));
    }
    (dir, app)
}

fn bench(c: &mut Criterion) {
    let (_dir, mut app) = app();
    let mut term = Terminal::new(TestBackend::new(200, 60)).expect("terminal");
    c.bench_function("frame_300_nodes_5mb_output_200x60", |b| {
        b.iter(|| {
            app.turn();
            term.draw(|f| app.draw(f)).expect("draw");
        })
    });
    let mut small = Terminal::new(TestBackend::new(80, 24)).expect("terminal");
    c.bench_function("frame_300_nodes_5mb_output_80x24", |b| {
        b.iter(|| {
            app.turn();
            small.draw(|f| app.draw(f)).expect("draw");
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(40).measurement_time(Duration::from_secs(4));
    targets = bench
}
criterion_main!(benches);
