//! Runs `tests/tui_e2e.sh`, `tests/tui_e2e_hitl.sh`,
//! `tests/tui_e2e_hitl_parallel.sh`, `tests/tui_e2e_modes.sh`,
//! `tests/tui_e2e_terminal.sh`, `tests/tui_e2e_authoring.sh`,
//! `tests/tui_e2e_power.sh` and `tests/tui_e2e_record.sh`: the real
//! binary in tmux, driven by keys. Where tmux is missing the tests say so and pass,
//! except under CI (`CI` set), where `.ci/run` installs tmux and a missing
//! one is a failure. The HITL stories need the SDK venv at `target/pyvenv`
//! and fail (they do not skip) without it.

use std::process::Command;

mod common;
use common::Hermetic;

fn has_tmux() -> bool {
    let has = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has {
        common::skipped("tui_e2e", "tmux is not installed (apt-get install tmux)");
    }
    has
}

fn story(script: &str) {
    story_with(script, &[]);
}

/// [`story`] with `envs` set for the script.
fn story_with(script: &str, envs: &[(&str, &str)]) {
    let out = Command::new("bash")
        .hermetic()
        .arg(format!("{}/tests/{script}", env!("CARGO_MANIFEST_DIR")))
        .env("PIPEWRIGHT_BIN", env!("CARGO_BIN_EXE_pipewright"))
        .envs(envs.iter().copied())
        .output()
        .expect("bash runs");
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        out.status.success(),
        "the tmux story {script} failed:\n{text}"
    );
    assert!(text.contains(", 0 failed"), "{text}");
}

#[test]
fn workbench_story_in_a_real_terminal() {
    if has_tmux() {
        story("tui_e2e.sh");
    }
}

#[test]
fn a_server_asks_and_the_person_answers_in_the_workbench() {
    if has_tmux() {
        story("tui_e2e_hitl.sh");
    }
}

#[test]
fn two_parallel_questions_on_one_stdio_server_both_reach_the_person() {
    if has_tmux() {
        story("tui_e2e_hitl_parallel.sh");
    }
}

/// The same story against the SDK's default server, which speaks both
/// eras and asks mid-call, with no protocol flag (issue 36).
#[test]
fn two_parallel_questions_from_a_server_of_both_eras_reach_the_person_with_no_flags() {
    if has_tmux() {
        story_with("tui_e2e_hitl_parallel.sh", &[("HITL_MODE", "dual")]);
    }
}

#[test]
fn the_interaction_model_in_a_real_terminal_at_80x24() {
    if has_tmux() {
        story("tui_e2e_modes.sh");
    }
}

#[test]
fn the_workbench_logs_to_a_file_and_gives_the_terminal_back_on_a_signal() {
    if has_tmux() {
        story("tui_e2e_terminal.sh");
    }
}

#[test]
fn a_pipeline_is_written_from_an_empty_file_with_completion_and_preflight() {
    if has_tmux() {
        story("tui_e2e_authoring.sh");
    }
}

#[test]
fn a_power_user_walks_the_workbench_at_80x24() {
    if has_tmux() {
        story("tui_e2e_power.sh");
    }
}

#[test]
fn the_workbench_follows_a_recording_as_it_is_written() {
    if has_tmux() {
        story("tui_e2e_record.sh");
    }
}
