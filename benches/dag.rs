//! The DAG pane with 300 nodes: layout once per plan, then one render of
//! the pane per frame (goal for a whole frame: under 8 ms), plus a hub
//! graph whose long edges need many dummy slots.

use std::fmt::Write as _;

use criterion::{Criterion, criterion_group, criterion_main};
use pipewright::engine::file::model::Composition;
use pipewright::engine::file::open::load_str;
use pipewright::engine::run::trace::NodeStatus;
use pipewright::ui::{DagLayout, DagState, DagView, NodeVisual, Theme};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::widgets::StatefulWidget;

/// `n` nodes in layers of `width`, each needing two nodes of the layer
/// before; with `hub`, every node also needs node 0.
fn generate(n: usize, width: usize, hub: bool) -> Composition {
    let mut s = String::from("compositions:\n  - name: generated\n    nodes:\n");
    for i in 0..n {
        let _ = writeln!(s, "      - id: n{i}\n        tool: fetch_metadata");
        let mut needs = Vec::new();
        if i >= width {
            let a = i - width;
            let b = (i - width + (i * 7 + 3) % width).min(i - 1);
            needs.push(a);
            if b != a {
                needs.push(b);
            }
        }
        if hub && i > 0 && !needs.contains(&0) {
            needs.push(0);
        }
        if !needs.is_empty() {
            let names: Vec<String> = needs.iter().map(|p| format!("n{p}")).collect();
            let _ = writeln!(s, "        needs: [{}]", names.join(", "));
        }
    }
    let loaded = load_str(&s);
    match loaded.valid() {
        Some(p) => p.compositions[0].clone(),
        None => panic!("generated pipeline does not load: {:?}", loaded.diagnostics),
    }
}

fn visuals(n: usize) -> Vec<NodeVisual> {
    (0..n)
        .map(|i| NodeVisual {
            status: match i % 4 {
                0 => NodeStatus::Ok,
                1 => NodeStatus::Running,
                2 => NodeStatus::Failed,
                _ => NodeStatus::Pending,
            },
            progress: (i % 11 == 0).then_some((3, 10)),
            breakpoint: i % 13 == 0,
            ..NodeVisual::default()
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let theme = Theme::dark();
    for (name, comp) in [
        ("layered", generate(300, 12, false)),
        ("hub", generate(300, 12, true)),
    ] {
        c.bench_function(&format!("dag layout 300 nodes ({name})"), |b| {
            b.iter(|| DagLayout::new(&comp))
        });
        let layout = DagLayout::new(&comp);
        let vis = visuals(comp.nodes.len());
        let area = Rect::new(0, 0, 120, 50);
        let mut buf = Buffer::empty(area);
        let mut state = DagState::default();
        state.select(Some(comp.nodes.len() / 2));
        let mut tick = 0;
        c.bench_function(&format!("dag render 300 nodes 120x50 ({name})"), |b| {
            b.iter(|| {
                tick += 1;
                let view = DagView {
                    comp: &comp,
                    layout: &layout,
                    nodes: &vis,
                    theme: &theme,
                    tick,
                    focused: true,
                };
                view.render(area, &mut buf, &mut state);
            })
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
