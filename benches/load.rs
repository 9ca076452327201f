//! Load + validate a generated 2,000-node composition (goal: under 20 ms).

use criterion::{Criterion, criterion_group, criterion_main};
use pipewright::engine::file::open::load_str;
use std::fmt::Write as _;

/// A layered DAG: 2,000 nodes in layers of 20, each node needing two nodes
/// of the layer before, with references, a transform on every fifth node,
/// a `when` on every seventh, and a fan-out on every eleventh.
fn generate(n: usize) -> String {
    let width = 20;
    let mut s = String::from("compositions:\n  - name: generated\n    nodes:\n");
    for i in 0..n {
        let _ = writeln!(s, "      - id: n{i}\n        tool: fetch_metadata");
        if i >= width {
            let a = i - width;
            let b = i - width + (i % width + 1) % width;
            let b = if b == a { a + 1 } else { b };
            let b = b.min(i - 1);
            let _ = writeln!(s, "        needs: [n{a}, n{b}]");
            let _ = writeln!(
                s,
                "        args:\n          name: \"${{n{a}.name}}\"\n          note: \"from ${{n{b}.meta.stars}} stars\""
            );
            if i % 7 == 0 {
                let _ = writeln!(s, "        when: \".parents.n{a}.name != null\"");
            }
            if i % 11 == 0 {
                let _ = writeln!(
                    s,
                    "        for_each: \"${{n{a}.items[*]}}\"\n        max_concurrency: 4"
                );
            }
        } else {
            let _ = writeln!(s, "        args: {{ name: \"pkg-{i}\" }}");
        }
        if i % 5 == 0 {
            let _ = writeln!(s, "        transform: \"{{name, meta}}\"");
        }
    }
    s
}

fn bench(c: &mut Criterion) {
    let src = generate(2000);
    let loaded = load_str(&src);
    assert!(!loaded.has_errors(), "{:?}", loaded.errors().next());
    assert_eq!(
        loaded
            .pipeline
            .as_ref()
            .map(|p| p.compositions[0].nodes.len()),
        Some(2000)
    );
    c.bench_function("load_2000_node_composition", |b| {
        b.iter(|| load_str(std::hint::black_box(&src)))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
