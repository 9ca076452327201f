//! The shape of the house, checked from the source: which file imports which
//! (every `use` tree and every `crate::`/`super::`/child-module path in code,
//! test modules left out), no circles between files or between the rooms of
//! the engine, the drivers' directions (the engine imports no driver, the
//! workbench does not import the command line, the language server
//! imports neither), and no source file longer than the limit.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::{Path, PathBuf},
};

use regex::Regex;

/// A non-test source file may have at most this many lines before its
/// `#[cfg(test)]` module.
const MAX_LINES: usize = 800;

/// One source file: its module path (`crate::engine::run::session`), the
/// child modules it declares, and its code with test modules cut off.
struct Module {
    path: Vec<String>,
    file: PathBuf,
    children: BTreeSet<String>,
    code: String,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every crate of the workspace: its source folder and the module path
/// it is read under, so the engine crate's `crate::run` is
/// `crate::engine::run` here, as the binary's crate re-exports it.
/// (Cargo keeps each crate from importing what it does not depend on;
/// this test checks the files inside them.)
/// A crate names another by its real name (`pipewright_engine::…`, no
/// renaming aliases), read here as the module path the binary's crate
/// re-exports it under.
const CRATES: &[(&str, &str)] = &[
    ("src", "crate"),
    ("crates/engine/src", "crate::engine"),
    ("crates/demo/src", "crate::demo_server"),
    ("crates/workbench/src", "crate::ui"),
    ("crates/serve/src", "crate::serve"),
    ("crates/cli/src", "crate::cli"),
    ("crates/lsp/src", "crate::lsp"),
    ("crates/record/src", "crate::record"),
];

/// The module path a crate of the workspace is read under, by its
/// package name's last part.
fn crate_prefix(name: &str) -> &'static str {
    let package = format!("crates/{name}/src");
    CRATES
        .iter()
        .find(|(dir, _)| *dir == package)
        .map(|(_, prefix)| *prefix)
        .expect("a crate of the workspace")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable src/").flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `crates/engine/src/run/session.rs` under `crate::engine` →
/// `["crate", "engine", "run", "session"]`.
fn module_path(file: &Path, dir: &str, prefix: &str) -> Vec<String> {
    let rel = file
        .strip_prefix(root().join(dir))
        .expect("under its crate");
    let mut path: Vec<String> = prefix.split("::").map(str::to_owned).collect();
    for part in rel.with_extension("").iter() {
        let part = part.to_string_lossy().to_string();
        if part != "lib" && part != "main" {
            path.push(part);
        }
    }
    path
}

/// The code of a file without its test module(s): a `#[cfg(test)] mod
/// tests;` declaration is left out wherever it is (the code after it is
/// production code and is read), and an inline `#[cfg(test)] mod … {`
/// cuts the rest of the file.
fn strip_tests(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let next = lines.get(i + 1).map(|l| l.trim()).unwrap_or("");
        if line.trim() == "#[cfg(test)]" && next.starts_with("mod ") {
            if next.ends_with(';') {
                i += 2;
                continue;
            }
            break;
        }
        out.push(line);
        i += 1;
    }
    out.join("\n")
}

fn strip_comments(code: &str) -> String {
    code.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn load_modules() -> Vec<Module> {
    let decl = Regex::new(r"(?m)^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+([a-z_0-9]+)\s*;").unwrap();
    let crate_path = Regex::new(r"\bcrate::([A-Za-z_][A-Za-z_0-9]*)").unwrap();
    let other_crate = Regex::new(r"\bpipewright_(engine|demo|workbench|serve|cli|lsp)\b").unwrap();
    let mut modules = Vec::new();
    for (dir, prefix) in CRATES {
        let mut files = Vec::new();
        rust_files(&root().join(dir), &mut files);
        files.sort();
        let inside = format!("{prefix}::");
        for file in files {
            if file.file_name().is_some_and(|n| n == "tests.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&file).expect("readable source");
            let code = strip_comments(&strip_tests(&text));
            let code = crate_path
                .replace_all(&code, |c: &regex::Captures| format!("{inside}{}", &c[1]))
                .into_owned();
            // Another crate, by its real name, is the module the binary's
            // crate re-exports it as.
            let code = other_crate
                .replace_all(&code, |c: &regex::Captures| crate_prefix(&c[1]).to_string())
                .into_owned();
            let children = decl
                .captures_iter(&code)
                .map(|c| c[1].to_string())
                .filter(|n| n != "tests")
                .collect();
            modules.push(Module {
                path: module_path(&file, dir, prefix),
                file,
                children,
                code,
            });
        }
    }
    modules
}

/// Every path a `use` tree names, with its braces expanded.
fn expand_use(tree: &str) -> Vec<String> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    fn go(prefix: &str, tree: &str, out: &mut Vec<String>) {
        match tree.find('{') {
            None => out.push(format!("{prefix}{tree}")),
            Some(open) => {
                let head = &tree[..open];
                let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
                let mut depth = 0;
                let mut start = 0;
                for (i, c) in inner.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => depth -= 1,
                        ',' if depth == 0 => {
                            go(&format!("{prefix}{head}"), &inner[start..i], out);
                            start = i + 1;
                        }
                        _ => {}
                    }
                }
                if start < inner.len() {
                    go(&format!("{prefix}{head}"), &inner[start..], out);
                }
            }
        }
    }
    let mut out = Vec::new();
    go("", &tree, &mut out);
    out
}

/// The module files each file imports, resolved to the deepest module that
/// exists. Edges to the file itself are dropped.
fn import_graph(modules: &[Module]) -> BTreeMap<String, BTreeSet<String>> {
    let known: BTreeSet<Vec<String>> = modules.iter().map(|m| m.path.clone()).collect();
    let use_stmt = Regex::new(r"(?ms)^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+([^;]+);").unwrap();
    let inline = Regex::new(r"\b((?:crate|super|self)(?:::[A-Za-z_][A-Za-z_0-9]*)+)").unwrap();
    let word_path =
        Regex::new(r"(?:^|[^:\w])([a-z_][a-z_0-9]*(?:::[A-Za-z_][A-Za-z_0-9]*)+)").unwrap();
    let mut graph = BTreeMap::new();
    for m in modules {
        let mut paths: Vec<String> = Vec::new();
        for c in use_stmt.captures_iter(&m.code) {
            paths.extend(expand_use(&c[1]));
        }
        paths.extend(inline.captures_iter(&m.code).map(|c| c[1].to_string()));
        paths.extend(
            word_path
                .captures_iter(&m.code)
                .map(|c| c[1].to_string())
                .filter(|p| m.children.contains(p.split("::").next().unwrap_or(""))),
        );
        let mut targets = BTreeSet::new();
        for p in paths {
            let segs: Vec<&str> = p.split("::").collect();
            let mut abs: Vec<String> = match segs[0] {
                "crate" => vec!["crate".into()],
                "self" => m.path.clone(),
                "super" => m.path[..m.path.len() - 1].to_vec(),
                first if m.children.contains(first) => {
                    let mut a = m.path.clone();
                    a.push(first.to_string());
                    a
                }
                _ => continue,
            };
            for seg in &segs[1..] {
                if *seg == "super" {
                    abs.pop();
                } else {
                    abs.push(seg.to_string());
                }
            }
            while !abs.is_empty() && !known.contains(&abs) {
                abs.pop();
            }
            if !abs.is_empty() && abs != m.path {
                targets.insert(abs.join("::"));
            }
        }
        graph.insert(m.path.join("::"), targets);
    }
    graph
}

/// Strongly connected components with more than one member (Tarjan).
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        next: usize,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on_stack.insert(v);
        if let Some(edges) = s.graph.get(v) {
            for w in edges {
                let w = w.as_str();
                if !s.index.contains_key(w) {
                    visit(s, w);
                    let lw = s.low[w];
                    let lv = s.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(lw);
                } else if s.on_stack.contains(w) {
                    let iw = s.index[w];
                    let lv = s.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(iw);
                }
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                s.out.push(comp);
            }
        }
    }
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

/// The graph folded to modules `depth` segments deep below `crate`
/// (`crate::engine::run::session` at depth 2 is `crate::engine::run`).
fn folded(
    graph: &BTreeMap<String, BTreeSet<String>>,
    prefix: &str,
    depth: usize,
) -> BTreeMap<String, BTreeSet<String>> {
    let fold = |p: &str| -> Option<String> {
        if !p.starts_with(prefix) {
            return None;
        }
        Some(p.split("::").take(depth + 1).collect::<Vec<_>>().join("::"))
    };
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, tos) in graph {
        let Some(f) = fold(from) else { continue };
        let entry = out.entry(f.clone()).or_default();
        for to in tos {
            if let Some(t) = fold(to)
                && t != f
            {
                entry.insert(t);
            }
        }
    }
    out
}

fn describe(circles: &[Vec<String>]) -> String {
    circles
        .iter()
        .map(|c| c.join(" ↔ "))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn no_file_imports_a_file_that_imports_it_back() {
    let graph = import_graph(&load_modules());
    let found = circles(&graph);
    assert!(
        found.is_empty(),
        "import circles between files:\n{}",
        describe(&found)
    );
}

#[test]
fn top_level_modules_and_engine_rooms_form_no_circles() {
    let graph = import_graph(&load_modules());
    let top = folded(&graph, "crate::", 1);
    let found = circles(&top);
    assert!(
        found.is_empty(),
        "circles between top-level modules:\n{}",
        describe(&found)
    );
    let rooms = folded(&graph, "crate::engine::", 2);
    let found = circles(&rooms);
    assert!(
        found.is_empty(),
        "circles between engine rooms:\n{}",
        describe(&found)
    );
}

#[test]
fn the_engine_imports_no_driver_and_the_workbench_not_the_command_line() {
    let graph = import_graph(&load_modules());
    let mut wrong = Vec::new();
    for (from, tos) in &graph {
        for to in tos {
            let driver = |m: &str| {
                ["crate::ui", "crate::cli", "crate::lsp"]
                    .iter()
                    .any(|d| m.starts_with(d))
            };
            // The language server is a driver beside the workbench: it
            // shares the engine with it, not code.
            let bad = (from.starts_with("crate::engine") && driver(to))
                || (from.starts_with("crate::ui") && to.starts_with("crate::cli"))
                || (from.starts_with("crate::lsp") && driver(to) && !to.starts_with("crate::lsp"))
                || (from.starts_with("crate::ui") && to.starts_with("crate::lsp"));
            if bad {
                wrong.push(format!("{from} → {to}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the drivers' direction:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_checker_sees_a_circle_when_there_is_one() {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    graph.insert("a".into(), ["b".to_string()].into());
    graph.insert("b".into(), ["c".to_string()].into());
    graph.insert("c".into(), ["a".to_string()].into());
    graph.insert("d".into(), ["a".to_string()].into());
    assert_eq!(
        circles(&graph),
        vec![vec!["a".to_string(), "b".into(), "c".into()]]
    );
    assert_eq!(
        expand_use("crate::engine::{file::{model, yaml::Node}, run}"),
        vec![
            "crate::engine::file::model",
            "crate::engine::file::yaml::Node",
            "crate::engine::run"
        ]
    );
}

#[test]
fn the_checker_sees_the_real_edges() {
    let graph = import_graph(&load_modules());
    let session = &graph["crate::engine::run::session"];
    assert!(
        session.contains("crate::engine::file::model"),
        "{session:?}"
    );
    assert!(
        graph["crate::cli"].contains("crate::ui"),
        "{:?}",
        graph["crate::cli"]
    );
    // Inside a crate, `crate::serve` is its own module, not the crate.
    let worker = &graph["crate::serve::worker"];
    assert!(
        worker.contains("crate::serve::serve::handler"),
        "{worker:?}"
    );
}

#[test]
fn no_source_file_is_longer_than_the_limit() {
    let long: Vec<String> = load_modules()
        .iter()
        .filter_map(|m| {
            let n = m.code.lines().count();
            (n > MAX_LINES).then(|| format!("{} has {n} lines", m.file.display()))
        })
        .collect();
    assert!(
        long.is_empty(),
        "over {MAX_LINES} lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn no_crate_renames_another() {
    let alias = Regex::new(r"(?m)^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+(pipewright_[a-z_]+)(?:::[A-Za-z_:]+)?\s+as\s+[a-z_]+\s*;").unwrap();
    let mut found = Vec::new();
    for (dir, _) in CRATES.iter().filter(|(d, _)| *d != "src") {
        let mut files = Vec::new();
        rust_files(&root().join(dir), &mut files);
        for file in files {
            let text = std::fs::read_to_string(&file).expect("readable source");
            for c in alias.captures_iter(&text) {
                found.push(format!("{}: {}", file.display(), c[0].trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "a path must say which crate it crosses into (no renaming aliases):\n{}",
        found.join("\n")
    );
}
