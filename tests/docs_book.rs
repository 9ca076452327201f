//! The docs book cannot go stale. Two pages are generated: the CLI
//! reference from the command line's own `--help` (clap), and the workbench
//! keys from the default keymap; each test fails when the committed page
//! differs, and `UPDATE_DOCS=1 cargo test --test docs_book` rewrites them.
//! Every relative link and `#anchor` in the book, the README and
//! ARCHITECTURE.md must resolve, and every `pipewright …` command written in
//! them may only use flags that command has.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use clap::CommandFactory;
use pipewright::cli::Cli;
use pipewright::ui::{Action, Keymap};
use regex::Regex;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Compares a generated page with the committed one, or rewrites it.
fn check_generated(rel: &str, generated: &str) {
    let path = root().join(rel);
    if std::env::var_os("UPDATE_DOCS").is_some() {
        std::fs::write(&path, generated).expect("writable docs page");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{rel} is stale: run `UPDATE_DOCS=1 cargo test --test docs_book` and commit it"
    );
}

/// Every subcommand, depth first, with its full name.
fn commands(cmd: &clap::Command, name: &str, out: &mut Vec<(String, clap::Command)>) {
    out.push((name.to_owned(), cmd.clone()));
    for sub in cmd.get_subcommands() {
        if sub.get_name() == "help" {
            continue;
        }
        commands(sub, &format!("{name} {}", sub.get_name()), out);
    }
}

fn cli_reference() -> String {
    let mut cmd = Cli::command().term_width(100);
    cmd.build();
    let mut all = Vec::new();
    commands(&cmd, "pipewright", &mut all);
    let mut out = String::from(
        "# CLI reference\n\n<!-- Generated from the command line's --help by tests/docs_book.rs; \
         do not edit. UPDATE_DOCS=1 cargo test --test docs_book rewrites it. -->\n\n",
    );
    for (name, _) in &all {
        out.push_str(&format!("- [`{name}`](#{})\n", slug(name)));
    }
    // The page shows no variable's value, whatever the environment says:
    // clap reads one when the command is built and prints it.
    let no_value = Regex::new(r"\[env: ([A-Za-z0-9_]+)\]").expect("a valid regex");
    for (name, c) in all {
        let shown: BTreeSet<String> = c
            .get_arguments()
            .filter(|a| !a.is_hide_env_values_set())
            .filter_map(|a| a.get_env())
            .map(|e| e.to_string_lossy().into_owned())
            .collect();
        let mut c = c.mut_args(|a| a.hide_env_values(true));
        let help = c.render_long_help().to_string();
        let help = no_value.replace_all(&help, |m: &regex::Captures| match shown.contains(&m[1]) {
            true => format!("[env: {}=]", &m[1]),
            false => m[0].to_owned(),
        });
        let help: String = help
            .lines()
            .map(|l| format!("{}\n", l.trim_end()))
            .collect();
        out.push_str(&format!(
            "\n## {name}\n\n```text\n{}\n```\n",
            help.trim_end()
        ));
    }
    out
}

fn keys_reference() -> String {
    let keymap = Keymap::default();
    let mut out = String::from(
        "# Workbench keys\n\n<!-- Generated from the default keymap by tests/docs_book.rs; \
         do not edit. UPDATE_DOCS=1 cargo test --test docs_book rewrites it. -->\n\n\
         Every key can be rebound in `config.yaml` under `keys:`, by the action's name \
         ([the workbench](../workbench.md)). Plain keys act in the DAG and the inspector; \
         in the editor they are text.\n\n| action | keys | what it does |\n|---|---|---|\n",
    );
    for a in Action::ALL {
        let keys: Vec<String> = keymap.keys(*a).iter().map(|k| format!("`{k}`")).collect();
        out.push_str(&format!(
            "| `{}` | {} | {} |\n",
            a.name(),
            keys.join(", ").replace('|', "\\|"),
            a.describe().replace('|', "\\|")
        ));
    }
    out
}

#[test]
fn the_cli_reference_is_what_help_prints() {
    check_generated("docs/src/reference/cli.md", &cli_reference());
}

#[test]
fn the_keys_page_is_the_default_keymap() {
    check_generated("docs/src/reference/keys.md", &keys_reference());
}

/// GitHub's and mdBook's anchor for a heading.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The text of a markdown file outside fenced code blocks.
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

fn anchors(text: &str) -> BTreeSet<String> {
    prose(text)
        .lines()
        .filter_map(|l| l.strip_prefix('#'))
        .map(|h| slug(h.trim_start_matches('#')))
        .collect()
}

fn doc_files() -> Vec<PathBuf> {
    let mut out = vec![root().join("README.md"), root().join("ARCHITECTURE.md")];
    let mut stack = vec![root().join("docs/src")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).expect("docs/src").flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Broken links of one file: relative targets that do not exist, and
/// anchors no heading of the target has.
fn broken_links(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).expect("readable doc");
    let link = Regex::new(r"\]\(([^)\s]+)\)").unwrap();
    let mut bad = Vec::new();
    for c in link.captures_iter(&prose(&text)) {
        let target = &c[1];
        if target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        let (path, anchor) = match target.split_once('#') {
            Some((p, a)) => (p, Some(a)),
            None => (target, None),
        };
        let dest = if path.is_empty() {
            file.to_path_buf()
        } else {
            file.parent().expect("in a folder").join(path)
        };
        if !dest.exists() {
            bad.push(format!("{}: `{target}`: no such file", file.display()));
            continue;
        }
        if let Some(a) = anchor
            && dest.extension().is_some_and(|x| x == "md")
        {
            let t = std::fs::read_to_string(&dest).unwrap_or_default();
            if !anchors(&t).contains(a) {
                bad.push(format!(
                    "{}: `{target}`: no heading with that anchor",
                    file.display()
                ));
            }
        }
    }
    bad
}

#[test]
fn every_link_and_anchor_in_the_docs_resolves() {
    let bad: Vec<String> = doc_files().iter().flat_map(|f| broken_links(f)).collect();
    assert!(bad.is_empty(), "broken links:\n{}", bad.join("\n"));
}

#[test]
fn the_link_checker_finds_a_broken_link_and_anchor() {
    let dir = tempfile::tempdir().expect("temp dir");
    let page = dir.path().join("page.md");
    std::fs::write(
        &page,
        "# Title\n\n## Two words\n\n[ok](#two-words) [file](missing.md) [anchor](#nope)\n\n```\n[skipped](in-code.md)\n```\n",
    )
    .expect("write");
    let bad = broken_links(&page);
    assert_eq!(bad.len(), 2, "{bad:?}");
    assert!(
        bad[0].contains("missing.md") && bad[1].contains("#nope"),
        "{bad:?}"
    );
}

/// Long flags of every subcommand (by its path after `pipewright`), with
/// the global ones under "".
fn flags() -> BTreeMap<String, BTreeSet<String>> {
    let mut cmd = Cli::command();
    cmd.build();
    let mut all = Vec::new();
    commands(&cmd, "", &mut all);
    all.into_iter()
        .map(|(name, c)| {
            let longs = c
                .get_arguments()
                .filter_map(|a| a.get_long().map(str::to_owned))
                .chain(["help".to_owned(), "version".to_owned()])
                .collect();
            (name.trim().to_owned(), longs)
        })
        .collect()
}

#[test]
fn every_pipewright_command_in_the_docs_uses_real_flags() {
    let flags = flags();
    let cmd_line = Regex::new(r"(?:^|[`$\s(])pipewright ([^`\n|]*)").unwrap();
    let mut bad = Vec::new();
    let mut checked = 0;
    for file in doc_files() {
        if file.ends_with("reference/cli.md") {
            continue;
        }
        let text = std::fs::read_to_string(&file).expect("readable doc");
        for c in cmd_line.captures_iter(&text) {
            let words: Vec<&str> = c[1].split_whitespace().collect();
            // The longest run of leading words that names a subcommand.
            let mut sub = String::new();
            for n in (0..=words.len()).rev() {
                let candidate = words[..n].join(" ");
                if flags.contains_key(&candidate) {
                    sub = candidate;
                    break;
                }
            }
            let known = &flags[&sub];
            for w in &words {
                let Some(name) = w.strip_prefix("--") else {
                    continue;
                };
                let name = name.split(['=', ',', ')', '.']).next().unwrap_or("");
                if name.is_empty() || !name.starts_with(|c: char| c.is_ascii_lowercase()) {
                    continue;
                }
                checked += 1;
                if !known.contains(name) && !flags[""].contains(name) {
                    bad.push(format!(
                        "{}: `pipewright {sub}` has no --{name}",
                        file.display()
                    ));
                }
            }
        }
    }
    // Any other `--flag` written in the docs, outside lines that run
    // another tool, must exist on some subcommand.
    let any: BTreeSet<&String> = flags.values().flatten().collect();
    let loose = Regex::new(r"(?:^|[\s`(])--([a-z][a-z0-9-]*)").unwrap();
    for file in doc_files() {
        if file.ends_with("reference/cli.md") {
            continue;
        }
        let text = std::fs::read_to_string(&file).expect("readable doc");
        for line in text.lines() {
            if ["cargo ", "npm ", "mdbook ", "hyperfine ", "node "]
                .iter()
                .any(|t| line.contains(t))
            {
                continue;
            }
            for f in loose.captures_iter(line) {
                checked += 1;
                if !any.contains(&f[1].to_string()) {
                    bad.push(format!("{}: no subcommand has --{}", file.display(), &f[1]));
                }
            }
        }
    }
    assert!(
        checked > 20,
        "the checker found only {checked} flags in the docs"
    );
    assert!(
        bad.is_empty(),
        "flags that do not exist:\n{}",
        bad.join("\n")
    );
}
