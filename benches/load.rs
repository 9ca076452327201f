//! Load + validate a generated 2,000-node composition (goal: under 20 ms),
//! and what `pipewright run` of a 1,000-step pipe does with its file: load
//! it, and mask the copy kept beside the saved run.

use criterion::{Criterion, criterion_group, criterion_main};
use pipewright::engine::file::open::load_str;
use pipewright::engine::run::store::KeptSource;
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

/// A pipe of `n` `echo` steps against a stdio server with `env:` values
/// and an HTTP server with headers (secrets the kept copy masks), each
/// step reading the one before.
fn pipe(n: usize) -> String {
    let mut s = String::from(
        "servers:\n  demo:\n    command: pipewright\n    args: [demo-server]\n    env:\n      DEMO_TOKEN: sk-demo-secret-0001\n      OTHER: another-secret\n  api:\n    url: http://127.0.0.1:9/mcp\n    headers: { Authorization: \"Bearer sk-header-0002\", X-Env: \"${env.KEY}\" }\npipe:\n",
    );
    for i in 0..n {
        let _ = writeln!(s, "  - id: s{i}\n    server: demo\n    tool: echo");
        if i == 0 {
            let _ = writeln!(s, "    args: {{ message: \"step {i}\" }}");
        } else {
            let _ = writeln!(s, "    args: {{ message: \"${{s{}.text}} {i}\" }}", i - 1);
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

    let src = pipe(1000);
    let loaded = load_str(&src);
    assert!(!loaded.has_errors(), "{:?}", loaded.errors().next());
    let Some(pipeline) = loaded.pipeline else {
        panic!("no pipeline")
    };
    assert!(!KeptSource::of(&src, &pipeline).as_str().contains("sk-"));
    c.bench_function("load_1000_step_pipe", |b| {
        b.iter(|| load_str(std::hint::black_box(&src)))
    });
    // The copy kept beside a saved run: masked with the pipeline the run
    // loaded, against loading the text again to learn its secrets.
    c.bench_function("kept_source_1000_step_pipe_of_loaded", |b| {
        b.iter(|| KeptSource::of(std::hint::black_box(&src), &pipeline))
    });
    c.bench_function("kept_source_1000_step_pipe_parsed_again", |b| {
        b.iter(|| KeptSource::parse(std::hint::black_box(&src), &Default::default()))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
