//! Runs `tests/tui_e2e.sh`, `tests/tui_e2e_hitl.sh`,
//! `tests/tui_e2e_hitl_parallel.sh`, `tests/tui_e2e_modes.sh`,
//! `tests/tui_e2e_terminal.sh`, `tests/tui_e2e_authoring.sh`,
//! `tests/tui_e2e_power.sh`, `tests/tui_e2e_record.sh` and the second
//! review's stories (`tests/tui_e2e_review*.sh`, issue 48: one check per
//! item, each failing until its fix lands): the real
//! binary in tmux, driven by keys. Where tmux is missing the tests say so and pass,
//! except under CI (`CI` set), where `.ci/run` installs tmux and a missing
//! one is a failure. The HITL stories need the SDK venv at `target/pyvenv`
//! and fail (they do not skip) without it. A story that cannot check
//! something on this machine prints `skip - WHY`, which goes through
//! [`common::skipped`] like every other skip.

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
    for why in text.lines().filter_map(|l| l.strip_prefix("skip - ")) {
        common::skipped(script, why);
    }
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

// The second review (issue 48): each check names its item; until an
// item's fix lands its checks fail, which is the defect they show.

/// Items 1-4 at 80x24: a stale node's tool, time paused with calls in
/// flight, a second workbench on the same file, messages that fit.
#[test]
fn the_second_review_items_1_to_4_at_80x24() {
    if has_tmux() {
        story("tui_e2e_review.sh");
    }
}

/// Items 5, 6, 8, 14 and 24: footers, markers and Messages while a run
/// goes, a server that cannot start, `--on restate://…`.
#[test]
fn the_second_review_driving_a_run() {
    if has_tmux() {
        story("tui_e2e_review_run.sh");
    }
}

/// Items 5, 8, 12 and 13: a server's questions (the URL footer, answers
/// logged once, a form's errors at once, Ctrl-U, Ctrl-G with no provider).
#[test]
fn the_second_review_a_servers_questions() {
    if has_tmux() {
        story("tui_e2e_review_ask.sh");
    }
}

/// Items 13 and 15: keys that do nothing, History read-only and its diff,
/// search in Raw.
#[test]
fn the_second_review_keys_that_look() {
    if has_tmux() {
        story("tui_e2e_review_views.sh");
    }
}

/// Items 7, 10, 11, 16 and 18: staleness, completion's types, preflight's
/// place, an unclosed quote, the scaffolds.
#[test]
fn the_second_review_writing_the_file() {
    if has_tmux() {
        story("tui_e2e_review_edit.sh");
    }
}

/// Item 9: the light theme's status bar, and a light terminal with no
/// `--theme`, measured with WCAG's formula.
#[test]
fn the_second_review_colours_that_read() {
    if has_tmux() {
        story("tui_e2e_review_theme.sh");
    }
}

/// Item 17: the polish points, one check each.
#[test]
fn the_second_review_polish() {
    if has_tmux() {
        story("tui_e2e_review_polish.sh");
    }
}

/// Item 24 with a real Restate and a worker (tests/durable's `npm ci`):
/// the node whose call is open while a durable run is followed, and
/// `runs list`'s columns for a durable run's id.
#[test]
fn the_second_review_a_followed_durable_run() {
    if has_tmux() {
        story("tui_e2e_review_durable.sh");
    }
}
