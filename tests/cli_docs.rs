//! Every flag is documented in `--help`, and the completion scripts and man
//! pages cover every subcommand.

use assert_cmd::Command;
use clap::CommandFactory;
use pipewright::cli::Cli;

mod common;

fn pw() -> Command {
    Command::from_std(common::pipewright())
}

#[test]
fn every_subcommand_and_flag_has_help_text() {
    fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
        if cmd.get_about().is_none() && path != "pipewright" {
            missing.push(format!("{path} (the command)"));
        }
        for arg in cmd.get_arguments() {
            let id = arg.get_id().as_str();
            if id == "help" || id == "version" {
                continue;
            }
            if arg.get_help().is_none() && arg.get_long_help().is_none() {
                missing.push(format!("{path} {id}"));
            }
        }
        for sub in cmd.get_subcommands() {
            walk(sub, &format!("{path} {}", sub.get_name()), missing);
        }
    }
    let mut cmd = Cli::command();
    cmd.build();
    let mut missing = Vec::new();
    walk(&cmd, "pipewright", &mut missing);
    assert!(missing.is_empty(), "undocumented: {missing:?}");
}

#[test]
fn completions_cover_the_subcommands() {
    for shell in ["bash", "zsh", "fish"] {
        let out = pw().args(["completions", shell]).output().expect("runs");
        assert!(out.status.success(), "{shell}");
        let text = String::from_utf8_lossy(&out.stdout);
        for sub in [
            "run",
            "check",
            "convert",
            "servers",
            "schema",
            "completions",
        ] {
            assert!(text.contains(sub), "{shell} completion lacks {sub}");
        }
        assert!(
            text.contains("dialect"),
            "{shell} completion lacks --dialect"
        );
    }
}

#[test]
fn man_writes_a_page_per_subcommand() {
    let dir = tempfile::tempdir().expect("tempdir");
    pw().args(["man", "--dir"])
        .arg(dir.path())
        .assert()
        .success();
    for page in [
        "pipewright.1",
        "pipewright-run.1",
        "pipewright-convert.1",
        "pipewright-servers-list.1",
    ] {
        let text = std::fs::read_to_string(dir.path().join(page)).unwrap_or_default();
        assert!(text.contains(".TH"), "{page} is not a man page");
    }
    let run = std::fs::read_to_string(dir.path().join("pipewright-run.1")).unwrap_or_default();
    assert!(
        run.contains("dialect") && run.contains("servers\\-from"),
        "run's page lists its flags"
    );
}

/// Issue 48, item 22: a flag one command uses is listed by that command,
/// not by every one: `new` and `demo-server` call no Fibe pipeline, so
/// their help shows no Fibe caps, while `run`'s does.
#[test]
fn fibes_caps_are_listed_only_where_they_apply() {
    let help = |args: &[&str]| {
        let out = pw().args(args).arg("--help").output().expect("runs");
        assert!(out.status.success(), "{args:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    for args in [&["new"][..], &["demo-server"]] {
        let text = help(args);
        assert!(
            !text.contains("--fibe-max"),
            "{args:?} --help lists Fibe's caps:\n{text}"
        );
    }
    assert!(help(&["run"]).contains("--fibe-max-steps"));
}
