//! Runs `tests/tui_e2e.sh`: the real binary in tmux, driven by keys. Where
//! tmux is missing the test says so and passes, except under CI (`CI` set),
//! where `.ci/run` installs tmux and a missing one is a failure.

use std::process::Command;

#[test]
fn workbench_story_in_a_real_terminal() {
    let has_tmux = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_tmux {
        assert!(
            std::env::var_os("CI").is_none(),
            "tmux is required under CI (.ci/run installs it)"
        );
        eprintln!("tui_e2e: tmux is not installed; skipped (install tmux to run it)");
        return;
    }
    let out = Command::new("bash")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/tui_e2e.sh"))
        .env("PIPEWRIGHT_BIN", env!("CARGO_BIN_EXE_pipewright"))
        .output()
        .expect("bash runs");
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "the tmux story failed:\n{text}");
    assert!(text.contains(", 0 failed"), "{text}");
}
