//! `pipewright new`: the scaffold written from the demo server's tools
//! loads, checks and plans; it never overwrites a file unless told to.

use std::path::Path;

use assert_cmd::Command;

mod common;

fn pw(home: &Path) -> Command {
    let mut c = Command::from_std(common::pipewright_in(home));
    c.current_dir(home);
    c
}

#[test]
fn two_demo_tools_make_a_file_that_checks_and_plans() {
    let dir = tempfile::tempdir().unwrap();
    // The schema beside the file, so its modeline has one to name.
    let schema = pw(dir.path()).arg("schema").output().unwrap().stdout;
    std::fs::write(dir.path().join("pipewright.schema.json"), schema).unwrap();
    let out = pw(dir.path())
        .args([
            "new",
            "two.yml",
            "--tool",
            "search_users",
            "--tool",
            "send_email",
        ])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let out = String::from_utf8(out).unwrap();
    assert!(
        out.contains("wrote two.yml: 2 node(s): search_users, send_email"),
        "{out}"
    );
    assert!(out.contains("next: pipewright edit two.yml"), "{out}");
    let text = std::fs::read_to_string(dir.path().join("two.yml")).unwrap();
    assert!(
        text.starts_with("# yaml-language-server: $schema=pipewright.schema.json\n"),
        "{text}"
    );
    assert!(
        !text.contains("servers:"),
        "the demo server is not declared:\n{text}"
    );
    for arg in [
        "query: ${var.QUERY}",
        "to: ${var.TO}",
        "subject: ${var.SUBJECT}",
        "body: ${var.BODY}",
    ] {
        assert!(text.contains(arg), "{arg} missing:\n{text}");
    }
    assert!(text.contains("needs: [search_users]"), "{text}");
    pw(dir.path()).args(["check", "two.yml"]).assert().success();
    let plan = pw(dir.path())
        .args(["plan", "two.yml"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let plan = String::from_utf8(plan).unwrap();
    assert!(plan.contains("demo/send_email"), "{plan}");
    pw(dir.path())
        .args(["run", "--dry-run", "two.yml"])
        .assert()
        .success();
}

#[test]
fn a_named_server_is_declared_and_nodes_check() {
    let dir = tempfile::tempdir().unwrap();
    let exe = env!("CARGO_BIN_EXE_pipewright");
    pw(dir.path())
        .args([
            "new",
            "--server",
            &format!("tools='{exe}' demo-server"),
            "--tool",
            "add",
        ])
        .assert()
        .success();
    let text = std::fs::read_to_string(dir.path().join("pipeline.yml")).unwrap();
    assert!(text.contains("servers:\n  tools:\n    command: "), "{text}");
    assert!(text.contains("args: [\"demo-server\"]"), "{text}");
    assert!(text.contains("a: 0  # number"), "{text}");
    pw(dir.path())
        .args(["check", "pipeline.yml"])
        .assert()
        .success();
}

/// With no tool chosen the file holds an example node that checks as it
/// is, and its first line names no schema that is not there.
#[test]
fn no_tool_off_a_terminal_writes_an_example_that_checks() {
    let dir = tempfile::tempdir().unwrap();
    pw(dir.path()).arg("new").assert().success();
    let text = std::fs::read_to_string(dir.path().join("pipeline.yml")).unwrap();
    assert!(text.contains("      - id: search_users\n"), "{text}");
    assert!(text.contains("# demo's tools: search_users"), "{text}");
    assert!(!text.contains("$schema="), "{text}");
    assert!(
        text.starts_with(
            "# For completion and checks in an editor: `pipewright schema > pipewright.schema.json`"
        ),
        "{text}"
    );
    pw(dir.path())
        .args(["check", "pipeline.yml"])
        .assert()
        .success();
    // Once the schema is beside it, a new file's modeline names it.
    let schema = pw(dir.path()).arg("schema").output().unwrap().stdout;
    std::fs::write(dir.path().join("pipewright.schema.json"), schema).unwrap();
    pw(dir.path()).args(["new", "more.yml"]).assert().success();
    let text = std::fs::read_to_string(dir.path().join("more.yml")).unwrap();
    assert!(
        text.starts_with("# yaml-language-server: $schema=pipewright.schema.json\n"),
        "{text}"
    );
}

#[test]
fn an_existing_file_is_kept_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("mine.yml"), "keep me\n").unwrap();
    let err = pw(dir.path())
        .args(["new", "mine.yml", "--tool", "echo"])
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    assert!(
        String::from_utf8(err)
            .unwrap()
            .contains("`mine.yml` exists")
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("mine.yml")).unwrap(),
        "keep me\n"
    );
    pw(dir.path())
        .args(["new", "mine.yml", "--tool", "echo", "--force"])
        .assert()
        .success();
    let text = std::fs::read_to_string(dir.path().join("mine.yml")).unwrap();
    assert!(text.contains("tool: echo"), "{text}");
}

#[test]
fn an_unknown_tool_is_refused_with_the_closest_name() {
    let dir = tempfile::tempdir().unwrap();
    let err = pw(dir.path())
        .args(["new", "--tool", "serch_users"])
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8(err).unwrap();
    assert!(
        err.contains("no server lists a tool `serch_users`; did you mean `search_users`?"),
        "{err}"
    );
    assert!(!dir.path().join("pipeline.yml").exists());
}

#[test]
fn a_new_file_in_the_workbench_starts_from_the_demo_scaffold() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("new.yml");
    let (text, line) =
        pipewright::ui::new_file_text(&pipewright::demo_server::tool_definitions(), Some(&file));
    assert!(text.contains("# demo's tools: search_users"), "{text}");
    let example = text.lines().nth(line - 1).unwrap();
    assert_eq!(example, "      - id: search_users", "{text}");
    // The scaffold checks as it is.
    std::fs::write(&file, &text).unwrap();
    pw(dir.path()).args(["check", "new.yml"]).assert().success();
}
