//! The workbench and the command line answer "what would this run do and
//! cost?" with the same engine function on the same inputs: for every
//! example (and a budgeted fan-out, and paid-digest under a cap below a
//! cent) the model behind the workbench's `d`/`e` views equals the
//! composition `pipewright plan --format json` prints, verdict included.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use pipewright::ui::{App, Config, Dirs, Editor, Keymap, Options, Theme};

mod common;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The workbench's plan model of `file`, with its data in `data`.
fn workbench_plan(file: &Path, data: &Path) -> Value {
    let editor = Editor::open(file, Some(data)).unwrap();
    let config = Config {
        theme: Theme::dark(),
        keymap: Keymap::default(),
    };
    let opts = Options {
        file: file.to_path_buf(),
        ..Options::default()
    };
    let dirs = Dirs::new(None, Some(data.to_path_buf()));
    let mut app = App::new(opts, dirs, config, editor);
    let until = Instant::now() + Duration::from_secs(20);
    let mut now = Instant::now();
    while app.composition().is_none() && Instant::now() < until {
        now += Duration::from_millis(400);
        app.on_tick(now);
        std::thread::sleep(Duration::from_millis(5));
    }
    let plan = app
        .plan_model()
        .unwrap_or_else(|| panic!("{}: no plan in the workbench", file.display()));
    serde_json::to_value(plan).unwrap()
}

/// `pipewright plan FILE --format json`, run with `data` as the data dir.
fn cli_plan(file: &Path, data: &Path) -> Value {
    let out = assert_cmd::Command::from_std(common::pipewright())
        .arg("plan")
        .arg(file)
        .args(["--format", "json", "--on-budget-exceeded", "warn"])
        .env("PIPEWRIGHT_DATA_DIR", data)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{}: not a plan ({e}): {}",
            file.display(),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn same_plan(file: &Path) -> Value {
    let data = tempfile::tempdir().unwrap();
    let ours = workbench_plan(file, data.path());
    let theirs = cli_plan(file, data.path());
    let entry = theirs["compositions"]
        .as_array()
        .and_then(|cs| {
            cs.iter()
                .find(|c| c["name"] == ours["name"] && c["case"] == ours["case"])
        })
        .cloned()
        .unwrap_or_else(|| {
            panic!(
                "{}: plan has no {}/{}",
                file.display(),
                ours["name"],
                ours["case"]
            )
        });
    assert_eq!(
        ours,
        entry,
        "{}: the workbench plans differently",
        file.display()
    );
    ours
}

#[test]
fn every_example_plans_the_same_in_the_workbench_and_the_cli() {
    let mut seen = 0;
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("examples"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    files.sort();
    for file in files {
        same_plan(&file);
        seen += 1;
    }
    assert!(seen >= 10, "only {seen} examples");
}

#[test]
fn a_cap_below_a_cent_is_over_budget_in_both() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root().join("examples/paid-digest.yml"))
        .unwrap()
        .replace("max_cost_usd: 0.01,", "max_cost_usd: 0.003,");
    let file = dir.path().join("paid-digest.yml");
    std::fs::write(&file, text).unwrap();
    let plan = same_plan(&file);
    assert_eq!(plan["calls_total"], 4);
    assert!((plan["cost_total"].as_f64().unwrap() - 0.006).abs() < 1e-9);
    assert_eq!(plan["verdict"]["within_budget"], false);
}

#[test]
fn a_budgeted_fan_out_plans_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let text = "budget: { max_cost_usd: 0.002 }\ncompositions:\n  - name: fan\n    nodes:\n      - id: topics\n        tool: echo\n        mock: { result: [a, b, c, d, e] }\n      - id: each\n        needs: [topics]\n        for_each: ${topics}\n        tool: summarize\n        args: { text: \"${item}\" }\n";
    let file = dir.path().join("fan.yml");
    std::fs::write(&file, text).unwrap();
    let plan = same_plan(&file);
    assert_eq!(plan["calls_total"], 5);
    assert_eq!(plan["verdict"]["within_budget"], false);
}
