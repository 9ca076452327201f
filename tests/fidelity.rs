//! Fidelity to the reference systems' documents: each test is named after
//! the sentence of the reference it checks, and runs the real binary
//! against the built-in demo server.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

#[path = "fidelity/compositions.rs"]
mod compositions;
#[path = "fidelity/discord.rs"]
mod discord;
#[path = "fidelity/fibe.rs"]
mod fibe;
#[path = "fidelity/pipe.rs"]
mod pipe;

mod common;

/// The binary, with no saved runs, no inherited Fibe caps and no judge
/// (`eval:` defers: no config.yaml, no `PIPEWRIGHT_JUDGE_*`): none of the
/// user's variables, its directories nowhere.
fn pw() -> Command {
    Command::from_std(common::pipewright())
}

/// The path of the binary, for server command lines.
fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("pipewright")
}

/// Writes `text` as `name` in a fresh temp dir (kept alive by the caller).
fn file(dir: &tempfile::TempDir, name: &str, text: &str) -> PathBuf {
    let p = dir.path().join(name);
    std::fs::write(&p, text).expect("write the file");
    p
}

/// What a command did.
struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Out {
    /// stdout as JSON (panics with stderr when it is not).
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}):\n{}\n{}",
                self.stdout, self.stderr
            )
        })
    }
}

fn output(mut c: Command) -> Out {
    let o = c.output().expect("pipewright runs");
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// `pipewright run --no-save ARGS… FILE`.
fn run(path: &Path, args: &[&str]) -> Out {
    let mut c = pw();
    c.arg("run").arg("--no-save").args(args).arg(path);
    output(c)
}

/// Writes `text` and runs it with `args`.
fn run_text(name: &str, text: &str, args: &[&str]) -> Out {
    let dir = tempfile::tempdir().expect("temp dir");
    let p = file(&dir, name, text);
    run(&p, args)
}
