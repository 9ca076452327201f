//! The shape of the house, checked from the source: which file imports which
//! (every `use` tree and every `crate::`/`super::`/child-module path in code,
//! test modules left out), no circles between files or between the rooms of
//! the engine, the drivers' directions (the engine imports no driver, the
//! workbench does not import the command line, the language server
//! imports neither), no circles between the workbench's rooms, no source
//! file longer than the limit, and the workbench's components keeping
//! their fields to themselves (none public, none written from outside the
//! component's own folder).

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
    ("crates/headless/src", "crate::headless"),
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

/// Test code: a `tests.rs` file, or any file under a `tests/` folder of a
/// crate's source (the workbench's whole-app tests, `src/tests/`).
fn is_test_file(file: &Path) -> bool {
    file.file_name().is_some_and(|n| n == "tests.rs")
        || file
            .strip_prefix(root())
            .unwrap_or(file)
            .components()
            .skip_while(|c| c.as_os_str() != "src")
            .any(|c| c.as_os_str() == "tests")
}

fn load_modules() -> Vec<Module> {
    let decl = Regex::new(r"(?m)^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+([a-z_0-9]+)\s*;").unwrap();
    let crate_path = Regex::new(r"\bcrate::([A-Za-z_][A-Za-z_0-9]*)").unwrap();
    let other_crate =
        Regex::new(r"\bpipewright_(engine|demo|workbench|serve|headless|cli|lsp)\b").unwrap();
    let mut modules = Vec::new();
    for (dir, prefix) in CRATES {
        let mut files = Vec::new();
        rust_files(&root().join(dir), &mut files);
        files.sort();
        let inside = format!("{prefix}::");
        for file in files {
            if is_test_file(&file) {
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
                || (from.starts_with("crate::ui") && to.starts_with("crate::lsp"))
                // What the headless drivers share borrows from none of them.
                || (from.starts_with("crate::headless")
                    && (driver(to) || to.starts_with("crate::serve")));
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
        graph["crate::cli::edit"].contains("crate::ui"),
        "{:?}",
        graph["crate::cli::edit"]
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

/// Every integration test file of the workspace: the root's tests/ and
/// each crate's tests/.
fn test_sources() -> Vec<PathBuf> {
    let mut files = Vec::new();
    rust_files(&root().join("tests"), &mut files);
    for entry in std::fs::read_dir(root().join("crates"))
        .expect("crates/")
        .flatten()
    {
        let dir = entry.path().join("tests");
        if dir.is_dir() {
            rust_files(&dir, &mut files);
        }
    }
    files.sort();
    files
}

/// Where a test file skips without `common::skipped`: an `if` on a missing
/// tool that returns early without it, or a line of its own that says it
/// skips.
fn own_skips(code: &str) -> Vec<String> {
    let tool_check =
        Regex::new(r"(?s)\bif\s+(?P<cond>[^{;]{0,300}?)\{(?P<body>[^{}]{0,800}?)\}").unwrap();
    let missing_tool =
        Regex::new(r"which\(|tmux|haproxy|python|pygls|venv|\bnode\b|npx|installed|-V\b|--version")
            .unwrap();
    let own_line = Regex::new(r#"(?i)(eprintln|println)!\(\s*"[^"]*(skip|not installed)"#).unwrap();
    let code = strip_comments(code);
    let mut found = Vec::new();
    for c in tool_check.captures_iter(&code) {
        let body = &c["body"];
        if missing_tool.is_match(&c["cond"])
            && body.contains("return")
            && !body.contains("skipped(")
            && !body.contains("panic!")
        {
            found.push(format!(
                "returns early on `{}` without common::skipped",
                c["cond"].trim()
            ));
        }
    }
    for m in own_line.find_iter(&code) {
        found.push(format!("says it skips on its own: {}", m.as_str()));
    }
    found
}

/// A test that cannot run for a missing tool says so through
/// `common::skipped`, the one helper that counts it at the end of the test
/// command and fails it under CI. A test that printed its own line and
/// returned passed silently (the second review's item 23).
#[test]
fn a_test_skips_only_through_the_one_helper() {
    let mut wrong = Vec::new();
    for file in test_sources() {
        if file.ends_with("tests/common/mod.rs") || file.ends_with("tests/architecture.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file).expect("readable");
        for problem in own_skips(&text) {
            wrong.push(format!("{}: {problem}", file.display()));
        }
    }
    assert!(
        wrong.is_empty(),
        "skips the count would miss:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_skip_check_finds_an_early_return_and_an_own_line() {
    let planted = "fn t() {\n    if which(\"haproxy\").is_none() {\n        eprintln!(\"haproxy is not installed; skipped\");\n        return;\n    }\n}\n";
    let found = own_skips(planted);
    assert_eq!(found.len(), 2, "{found:?}");
    let through_the_helper = "fn t() {\n    if which(\"haproxy\").is_none() {\n        common::skipped(\"t\", \"haproxy is not installed\");\n        return;\n    }\n}\n";
    assert!(own_skips(through_the_helper).is_empty());
}

#[test]
fn the_workbench_rooms_form_no_circles() {
    let graph = import_graph(&load_modules());
    let rooms = folded(&graph, "crate::ui::", 2);
    let found = circles(&rooms);
    assert!(
        found.is_empty(),
        "circles between the workbench's rooms:\n{}",
        describe(&found)
    );
}

/// A struct of the workbench: its name, its fields (name, whether declared
/// with any `pub`), and the file it is defined in.
struct Struct {
    name: String,
    fields: Vec<(String, bool)>,
    file: PathBuf,
}

/// The structs `code` defines with named fields.
fn structs_in(code: &str, file: &Path) -> Vec<Struct> {
    let head = Regex::new(
        r"(?m)^\s*(?:pub(?:\([^)]*\))?\s+)?struct\s+([A-Z][A-Za-z0-9_]*)(?:<[^>{]*>)?\s*\{",
    )
    .unwrap();
    let field = Regex::new(r"^\s*(pub(?:\([^)]*\))?\s+)?(r#)?([a-z_][a-z0-9_]*)\s*:").unwrap();
    let mut out = Vec::new();
    for m in head.captures_iter(code) {
        let Some(whole) = m.get(0) else { continue };
        let mut depth = 0usize;
        let mut fields = Vec::new();
        let mut line = String::new();
        for ch in code[whole.end()..].chars() {
            match ch {
                '{' | '(' | '<' | '[' => depth += 1,
                '}' if depth == 0 => break,
                '}' | ')' | '>' | ']' => depth = depth.saturating_sub(1),
                _ => {}
            }
            if ch == '\n' {
                if let Some(f) = field.captures(&line).filter(|_| depth == 0) {
                    fields.push((f[3].to_string(), f.get(1).is_some()));
                }
                line.clear();
            } else {
                line.push(ch);
            }
        }
        out.push(Struct {
            name: m[1].to_string(),
            fields,
            file: file.to_path_buf(),
        });
    }
    out
}

/// The workbench's product files and their code (comments and test
/// modules left out).
fn workbench_code() -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    rust_files(&root().join("crates/workbench/src"), &mut files);
    files.sort();
    files
        .into_iter()
        .filter(|f| !is_test_file(f))
        .map(|f| {
            let text = std::fs::read_to_string(&f).expect("readable source");
            let code = strip_comments(&strip_tests(&text));
            (f, code)
        })
        .collect()
}

/// The workbench's components: the structs that implement `Component`.
fn components(code: &[(PathBuf, String)]) -> Vec<Struct> {
    let implemented =
        Regex::new(r"impl(?:<[^>]*>)?\s+Component\s+for\s+([A-Z][A-Za-z0-9_]*)").unwrap();
    let names: BTreeSet<String> = code
        .iter()
        .flat_map(|(_, c)| implemented.captures_iter(c).map(|m| m[1].to_string()))
        .collect();
    code.iter()
        .flat_map(|(f, c)| structs_in(c, f))
        .filter(|s| names.contains(&s.name))
        .collect()
}

/// The fields of components declared with any `pub`.
fn public_fields(components: &[Struct]) -> Vec<String> {
    components
        .iter()
        .flat_map(|s| {
            s.fields
                .iter()
                .filter(|(_, public)| *public)
                .map(move |(f, _)| format!("{}: {}.{f}", s.file.display(), s.name))
        })
        .collect()
}

/// Assignments to a component's field from outside the component's folder:
/// `x.FIELD.F = …` (or `+=`, …) where the app's field `FIELD` holds the
/// component and `F` is one of its fields.
fn outside_writes(
    app: &Struct,
    app_types: &BTreeMap<String, String>,
    components: &[Struct],
    code: &[(PathBuf, String)],
) -> Vec<String> {
    let mut found = Vec::new();
    let word = Regex::new(r"[A-Z][A-Za-z0-9_]*").unwrap();
    for (held, ty) in app_types {
        let Some(comp) = word
            .find_iter(ty)
            .find_map(|w| components.iter().find(|c| c.name == w.as_str()))
        else {
            continue;
        };
        let folder = comp.file.with_extension("");
        let write = Regex::new(&format!(
            r"\.{held}(?:\s*\.\s*(?:as_mut\(\)|unwrap\(\)|expect\([^)]*\)))?\s*\.\s*([a-z_][a-z0-9_]*)\s*(?:[-+*/|&^]?=)[^=]"
        ))
        .unwrap();
        for (file, c) in code {
            if *file == comp.file || file.starts_with(&folder) {
                continue;
            }
            for m in write.captures_iter(c) {
                if comp.fields.iter().any(|(f, _)| *f == m[1]) {
                    found.push(format!(
                        "{}: {}.{held}.{} = …",
                        file.display(),
                        app.name,
                        &m[1]
                    ));
                }
            }
        }
    }
    found
}

/// The app's fields and their types, from its struct's text.
fn app_fields(code: &[(PathBuf, String)]) -> (Struct, BTreeMap<String, String>) {
    let (file, text) = code
        .iter()
        .find(|(f, _)| f.ends_with("crates/workbench/src/app.rs"))
        .expect("app.rs");
    let app = structs_in(text, file)
        .into_iter()
        .find(|s| s.name == "App")
        .expect("struct App");
    let start = text.find("pub struct App {").expect("struct App");
    let body = &text[start..];
    let typed =
        Regex::new(r"(?m)^\s*(?:pub(?:\([^)]*\))?\s+)?([a-z_][a-z0-9_]*)\s*:\s*([^\n]+),\s*$")
            .unwrap();
    let types = typed
        .captures_iter(&body[..body.find("\n}").unwrap_or(body.len())])
        .map(|c| (c[1].to_string(), c[2].to_string()))
        .collect();
    (app, types)
}

#[test]
fn workbench_components_keep_their_fields() {
    let code = workbench_code();
    let comps = components(&code);
    assert!(
        comps.iter().any(|c| c.name == "Dag") && comps.iter().any(|c| c.name == "Editor"),
        "the checker found no components: {:?}",
        comps.iter().map(|c| &c.name).collect::<Vec<_>>()
    );
    let public = public_fields(&comps);
    let (app, types) = app_fields(&code);
    let writes = outside_writes(&app, &types, &comps, &code);
    assert!(
        public.is_empty() && writes.is_empty(),
        "a component's fields are its own (private; methods for the rest):\n{}\n\
         written from outside the component's folder:\n{}",
        public.join("\n"),
        writes.join("\n")
    );
}

#[test]
fn the_field_checker_sees_a_public_field_and_a_write_from_outside() {
    let dir = root().join("crates/workbench/src");
    let pane = "pub(crate) struct Pane {\n    shown: bool,\n    pub(crate) rows: Vec<String>,\n}\nimpl Component for Pane {}\n";
    let app = "pub struct App {\n    pub(crate) pane: Pane,\n    pub(crate) quit: bool,\n}\n";
    let elsewhere = "fn f(app: &mut App) {\n    app.pane.shown = true;\n    app.pane.rows.push(String::new());\n    app.quit = app.pane.shown == false;\n}\n";
    let code = vec![
        (dir.join("pane.rs"), pane.to_string()),
        (dir.join("app.rs"), app.to_string()),
        (dir.join("app/input.rs"), elsewhere.to_string()),
        (
            dir.join("pane/keys.rs"),
            "fn g(p: &mut Pane) { p.pane.shown = false; }".to_string(),
        ),
    ];
    let comps = components(&code);
    assert_eq!(public_fields(&comps).len(), 1, "rows is pub(crate)");
    let (app, types) = app_fields(&code);
    let writes = outside_writes(&app, &types, &comps, &code);
    assert_eq!(writes.len(), 1, "{writes:?}");
    assert!(
        writes[0].contains("app/input.rs: App.pane.shown"),
        "{writes:?}"
    );
}

/// Ways product code reads the process's environment: its variables, its
/// working directory, its program, its home.
const ENVIRONMENT_READS: &str = r"\bstd::env\b|\benv::(var|vars|var_os|vars_os|current_dir|current_exe|home_dir|temp_dir|args|args_os)\b|\bcurrent_dir\(\)|\bcurrent_exe\(\)";

/// Each line of `code` that reads the environment, as `file:line: text`.
fn environment_reads(file: &str, code: &str) -> Vec<String> {
    let read = Regex::new(ENVIRONMENT_READS).unwrap();
    code.lines()
        .enumerate()
        .filter(|(_, line)| read.is_match(line))
        .map(|(i, line)| format!("{file}:{}: {}", i + 1, line.trim()))
        .collect()
}

#[test]
fn the_engine_reads_nothing_from_the_environment() {
    // Every value the process was started with reaches the engine from
    // its driver (`Environment`, in `Settings`); test modules may build
    // their own and are left out, as comments are.
    let mut found = Vec::new();
    for m in load_modules().iter().filter(|m| {
        m.path
            .starts_with(&["crate".to_owned(), "engine".to_owned()])
    }) {
        found.extend(environment_reads(&m.file.display().to_string(), &m.code));
    }
    assert!(
        found.is_empty(),
        "the engine reads the process's environment (take it from the driver's `Environment`):\n{}",
        found.join("\n")
    );
    // Nor through a dependency that reads it for it.
    let manifest = std::fs::read_to_string(root().join("crates/engine/Cargo.toml")).unwrap();
    assert!(
        !manifest
            .lines()
            .any(|l| l.trim_start().starts_with("directories")),
        "the engine depends on `directories`, which reads HOME and XDG_*: the driver asks it"
    );
}

#[test]
fn the_environment_check_sees_a_read_when_there_is_one() {
    for code in [
        "let home = std::env::var(\"HOME\");",
        "use std::env;",
        "let v = env::var_os(\"X\");",
        "let dir = current_dir().ok();",
        "let exe = std::env::current_exe();",
    ] {
        assert_eq!(environment_reads("f.rs", code).len(), 1, "{code}");
    }
    for code in [
        "cmd.current_dir(dir);",
        "let v = env.var(\"X\");",
        "let v = self.env.var_os(name);",
        "let version = env!(\"CARGO_PKG_VERSION\");",
    ] {
        assert!(environment_reads("f.rs", code).is_empty(), "{code}");
    }
}

/// The workbench files that may await: the event loop and what it runs on
/// tasks (a server's question handed to the screen, grading), and the
/// entry point that starts the loop. Everything else — the app and every
/// component — only changes state and returns effects.
const MAY_AWAIT: &[&str] = &[
    "crates/workbench/src/driver.rs",
    "crates/workbench/src/terminal.rs",
    "crates/workbench/src/lib.rs",
    "crates/workbench/src/judging.rs",
    "crates/workbench/src/ask/responder.rs",
];

/// The files of `code` that await, other than `allowed`.
fn awaiting(code: &[(PathBuf, String)], allowed: &[&str]) -> Vec<String> {
    let awaits = Regex::new(r"\.await\b|\basync\s+fn\b").unwrap();
    code.iter()
        .filter(|(f, _)| !allowed.iter().any(|a| f.ends_with(a)))
        .filter(|(_, c)| awaits.is_match(c))
        .map(|(f, _)| f.display().to_string())
        .collect()
}

/// The UI never awaits the network: only the event loop awaits; the app
/// and its components change state and hand the loop `Effect`s.
#[test]
fn the_workbench_awaits_only_in_its_event_loop() {
    let found = awaiting(&workbench_code(), MAY_AWAIT);
    assert!(
        found.is_empty(),
        "these workbench files await (the app and its components must hand the loop an Effect instead):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_await_check_sees_an_await() {
    let planted = vec![
        (
            PathBuf::from("crates/workbench/src/app/plan.rs"),
            "fn f() { x.await; }".to_owned(),
        ),
        (
            PathBuf::from("crates/workbench/src/driver.rs"),
            "async fn g() { y.await }".to_owned(),
        ),
    ];
    assert_eq!(
        awaiting(&planted, MAY_AWAIT),
        ["crates/workbench/src/app/plan.rs"]
    );
}
