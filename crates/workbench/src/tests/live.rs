//! The workbench driven as a person drives it: keys go through
//! `App::on_key`, effects through the same `Driver` the terminal loop uses,
//! sessions run against the real demo server (served over HTTP by this
//! process, on a port of its own for each test), and screens are drawn
//! with ratatui's `TestBackend`. Each test reproduces one way the
//! workbench once showed something untrue (issue 23).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use crate::app::{App, Effect, Options, RunState};
use crate::ask::State as AskState;
use crate::config::{Config, Dirs};
use crate::driver::Driver;
use crate::editor::Editor;
use crate::inspector::Tab;
use crate::keys::Keymap;
use crate::overlay::Overlay;
use crate::theme::Theme;
use pipewright_engine::run::trace::NodeStatus;

use super::{Demo, python, root};

#[allow(dead_code)]
#[path = "../../../../tests/eval/judge.rs"]
mod judge;

/// A workbench on a file, its driver, the directories it uses, and the
/// demo server it calls.
pub(super) struct Bench {
    pub(super) app: App,
    driver: Driver,
    dir: tempfile::TempDir,
    /// Stops the demo server when the test ends.
    _demo: Demo,
}

impl Bench {
    /// A workbench on a file with `text`, validated, with nothing run.
    pub(super) async fn open(text: &str) -> Bench {
        Bench::open_as("pipeline.yml", text).await
    }

    /// The same, the file named `name`.
    async fn open_as(name: &str, text: &str) -> Bench {
        Bench::open_with(name, text, pipewright_demo::DemoServerOptions::default()).await
    }

    /// The same, the demo server started with `demo`'s options.
    async fn open_with(name: &str, text: &str, demo: pipewright_demo::DemoServerOptions) -> Bench {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(name);
        std::fs::write(&file, text).unwrap();
        let data = dir.path().join("data");
        let editor = Editor::open(&file, Some(&data)).unwrap();
        let config = Config {
            theme: Theme::dark(),
            keymap: Keymap::default(),
        };
        // The built-in demo server, in this process over HTTP, as `demo`.
        let demo = Demo::start(demo);
        let opts = Options {
            file: file.clone(),
            servers: vec![format!("demo={}", demo.url()).parse().unwrap()],
            ..Options::default()
        };
        let dirs = Dirs {
            config: Some(dir.path().join("config")),
            data: Some(data),
        };
        let app = App::new(opts, dirs, config, editor);
        let mut bench = Bench {
            app,
            driver: Driver::new(),
            dir,
            _demo: demo,
        };
        bench
            .until("the file validates", |a| a.comp.is_some())
            .await;
        bench
    }

    fn apply(&mut self, effects: Vec<Effect>) {
        // Effects that need a real terminal ($EDITOR, a browser) are not
        // asked for in these tests.
        let rest = self.driver.apply(&mut self.app, effects);
        assert!(rest.is_empty(), "unexpected terminal effects: {rest:?}");
    }

    /// One pass of the loop: whatever the engine sends, or a tick.
    async fn pump(&mut self) {
        let effects = tokio::select! {
            incoming = self.driver.next() => self.driver.take(&mut self.app, incoming),
            () = tokio::time::sleep(Duration::from_millis(40)) => self.app.on_tick(Instant::now()),
        };
        self.apply(effects);
        let more = self.driver.drain(&mut self.app, 4096);
        self.apply(more);
    }

    /// Runs the loop until `cond` holds; fails with the screen after 30 s.
    async fn until(&mut self, what: &str, cond: impl Fn(&App) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !cond(&self.app) {
            assert!(
                Instant::now() < deadline,
                "timed out waiting until {what}; the screen:\n{}",
                self.screen(120, 30)
            );
            self.pump().await;
        }
    }

    /// A key press, through the app's real input handling.
    fn press(&mut self, key: KeyEvent) {
        let effects = self.app.on_key(key);
        self.apply(effects);
    }

    fn key(&mut self, code: KeyCode) {
        self.press(KeyEvent::new(code, KeyModifiers::NONE));
    }

    fn ctrl(&mut self, c: char) {
        self.press(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL));
    }

    /// Selects node `id` in the DAG (as the palette or a click would).
    fn select(&mut self, id: &str) {
        let i = self.app.comp.as_ref().and_then(|c| c.index_of(id));
        assert!(i.is_some(), "no node {id}");
        self.app.select(i, true);
    }

    fn status_of(&self, id: &str) -> NodeStatus {
        let i = self.app.comp.as_ref().unwrap().index_of(id).unwrap();
        self.app.visuals[i].status
    }

    /// Replaces the buffer's text, as typing it would.
    async fn edit_to(&mut self, text: &str) {
        let before = self.app.editor.text();
        assert_ne!(before, text);
        self.app.editor.set_text(text);
        // The debounced re-validation adopts the new plan.
        let want = text.to_owned();
        self.until("the edit is validated", move |a| {
            a.editor.text() == want && !a.editor.validating()
        })
        .await;
        // Two passes more: the session hears of the new plan and answers.
        for _ in 0..5 {
            self.pump().await;
        }
    }

    /// The screen as text.
    fn screen(&mut self, w: u16, h: u16) -> String {
        let mut term = Terminal::new(TestBackend::new(w, h)).unwrap();
        term.draw(|f| self.app.draw(f)).unwrap();
        let buf = term.backend().buffer();
        let mut out = String::new();
        for y in 0..h {
            for x in 0..w {
                out.push_str(buf[(x, y)].symbol());
            }
            out.push('\n');
        }
        out
    }

    /// The status line: the bar (the row above the footer), after the
    /// message's rows above it when a message too long for the bar has
    /// rows of its own.
    fn status_line(&mut self) -> String {
        let s = self.screen(160, 30);
        let own = crate::app::status::message_rows(&self.app, 160) as usize;
        let rows: Vec<&str> = s.lines().collect();
        let bar = rows.len().saturating_sub(2);
        rows[bar.saturating_sub(own)..=bar].join(" ")
    }

    fn runs_dir(&self) -> PathBuf {
        self.dir.path().join("data").join("runs")
    }

    /// F5, and the loop until this run (not the last one) finished.
    pub(super) async fn run_to_end(&mut self) {
        self.key(KeyCode::F(5));
        assert!(self.app.trace.is_none(), "F5 did not start a run");
        self.until("the run finishes", |a| {
            matches!(a.run, RunState::Finished(_)) && a.trace.is_some()
        })
        .await;
    }
}

fn finished(a: &App) -> bool {
    matches!(a.run, RunState::Finished(_))
}

const FOUR: &str = "\
pipe:
  - id: first
    tool: slow
    args: { ms: 700 }
  - id: second
    tool: echo
    args: { message: two }
  - id: third
    tool: fail
    args: { message: three fails }
    on_error: continue
  - id: fourth
    tool: echo
    args: { message: four }
";

/// Item 1: a second run starts from a clean slate; a step counts only
/// what this run did.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_run_shows_nothing_of_the_last_one() {
    let mut b = Bench::open(FOUR).await;
    b.run_to_end().await;
    assert_eq!(b.status_of("second"), NodeStatus::Ok);
    assert_eq!(b.status_of("third"), NodeStatus::Failed);

    b.key(KeyCode::F(5));
    b.until("first runs again", |a| {
        a.visuals[0].status == NodeStatus::Running
    })
    .await;
    for id in ["second", "third", "fourth"] {
        assert_eq!(b.status_of(id), NodeStatus::Pending, "{id}");
    }
    let screen = b.screen(120, 30);
    assert!(
        !screen.contains("✓ second") && !screen.contains("✗ third"),
        "the last run's results show during a new run:\n{screen}"
    );
    assert!(b.status_line().contains("0/4 ok"), "{}", b.status_line());
    b.until("it finishes", finished).await;

    // One step: one node ran, nothing failed yet.
    b.key(KeyCode::F(10));
    b.until("the step pauses", |a| {
        matches!(a.run, RunState::Paused { .. }) && a.visuals[0].status == NodeStatus::Ok
    })
    .await;
    let line = b.status_line();
    assert!(line.contains("STEP"), "{line}");
    assert!(line.contains("1/4 ok"), "{line}");
    assert!(
        !line.contains("failed"),
        "a step shows the last run's failure: {line}"
    );
}

/// Item 2: a running node shows its live call (the args it was called
/// with, running), and a node paused at a breakpoint shows args resolved
/// from this run's parents.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn running_and_paused_nodes_show_this_run() {
    let text = |ms: u32| {
        format!(
            "vars:\n  MS: {ms}\npipe:\n  - id: wait\n    tool: slow\n    args: {{ ms: \"${{var.MS}}\" }}\n  - id: find\n    tool: search_users\n    args: {{ query: carol }}\n  - id: details\n    tool: get_user_details\n    args:\n      user_id: ${{find.users[0].id}}\n"
        )
    };
    let mut b = Bench::open(&text(100)).await;
    b.run_to_end().await;
    b.edit_to(&text(2500)).await;
    b.select("wait");
    b.app.inspector.set_tab(Tab::Args);
    b.key(KeyCode::F(5));
    b.until("wait's call is made", |a| {
        a.visuals[0].status == NodeStatus::Running && a.visuals[0].live_args.is_some()
    })
    .await;
    let screen = b.screen(140, 34);
    assert!(screen.contains("running"), "{screen}");
    assert!(
        screen.contains("2500") && !screen.contains("\"ms\": 100"),
        "the running node shows the last run's args:\n{screen}"
    );
    assert!(screen.contains("args of the call in flight"), "{screen}");
    assert!(!screen.contains("✓ ok"), "{screen}");
    b.until("it finishes", finished).await;

    // A breakpoint on details: its args come from this run's `find`.
    b.select("details");
    b.key(KeyCode::Char('b'));
    b.key(KeyCode::F(5));
    b.until(
        "the run stops at details",
        |a| matches!(&a.run, RunState::Paused { before: Some(d), .. } if d == "details"),
    )
    .await;
    let screen = b.screen(140, 34);
    assert!(
        !screen.contains("<from find"),
        "details shows unresolved args though find ran:\n{screen}"
    );
    assert!(screen.contains("\"u3\""), "carol is u3:\n{screen}");
    b.key(KeyCode::F(8));
    b.until("it finishes", finished).await;
}

/// Item 5: a file with errors does not run, and the status says why and
/// where.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_with_errors_does_not_run() {
    let good = "pipe:\n  - id: a\n    tool: echo\n    args: { message: one }\n  - id: b\n    tool: echo\n    args: { message: \"${a.message}\" }\n";
    let mut b = Bench::open(good).await;
    b.run_to_end().await;
    let runs = std::fs::read_dir(b.runs_dir()).unwrap().count();
    let before = b.app.run.clone();
    b.edit_to(&good.replace("${a.message}", "${nope.message}"))
        .await;
    assert!(b.app.errors > 0);
    b.key(KeyCode::F(5));
    for _ in 0..10 {
        b.pump().await;
    }
    let line = b.status_line();
    assert!(line.contains("not run: the file has 1 error(s)"), "{line}");
    assert!(line.contains("line 7"), "the status says where: {line}");
    assert_eq!(b.app.run, before);
    assert_eq!(
        std::fs::read_dir(b.runs_dir()).unwrap().count(),
        runs,
        "a run happened"
    );
    // Re-running a node and stepping are refused too.
    b.select("b");
    b.key(KeyCode::Char('r'));
    assert!(b.status_line().contains("not run"), "{}", b.status_line());
    b.key(KeyCode::F(10));
    assert!(b.status_line().contains("not run"), "{}", b.status_line());
}

const THREE: &str = "\
vars:
  USER_QUERY: carol
pipe:
  - id: find
    tool: search_users
    args:
      query: ${var.USER_QUERY}
  - id: details
    tool: get_user_details
    args:
      user_id: ${find.users[0].id}
  - id: notify
    tool: send_email
    args:
      to: ${details.email}
      subject: hello
      body: hi
";

/// Item 6: editing `vars:` marks their readers and their descendants
/// stale.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn editing_vars_marks_their_readers_stale() {
    let mut b = Bench::open(THREE).await;
    b.run_to_end().await;
    assert!(b.app.visuals.iter().all(|v| v.status == NodeStatus::Ok));
    b.edit_to(&THREE.replace("carol", "dave")).await;
    b.until("the readers are stale", |a| {
        a.visuals.iter().all(|v| v.status == NodeStatus::Stale)
    })
    .await;
    // A new run uses the new value.
    b.run_to_end().await;
    let rec = b.app.visuals[0].record.clone().unwrap();
    assert_eq!(rec.args["query"], "dave");
}

/// Item 9: `r` with nothing run runs the node and its ancestors only,
/// and says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rerun_with_no_run_yet_runs_only_up_to_the_node() {
    let mut b = Bench::open(THREE).await;
    b.select("details");
    b.key(KeyCode::Char('r'));
    assert!(
        b.status_line().contains("no recorded parents yet"),
        "{}",
        b.status_line()
    );
    b.until("the run finishes", finished).await;
    assert_eq!(b.status_of("find"), NodeStatus::Ok);
    assert_eq!(b.status_of("details"), NodeStatus::Ok);
    assert_eq!(
        b.status_of("notify"),
        NodeStatus::Pending,
        "downstream of the re-run node ran"
    );
}

/// Item 9: `q` during a run asks, then cancels the run and saves it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quitting_during_a_run_saves_it_cancelled() {
    let mut b = Bench::open("pipe:\n  - id: long\n    tool: slow\n    args: { ms: 20000 }\n").await;
    b.key(KeyCode::F(5));
    b.until("long runs", |a| a.visuals[0].status == NodeStatus::Running)
        .await;
    b.key(KeyCode::Char('q'));
    assert!(
        matches!(
            &b.app.overlay,
            Some(Overlay::ConfirmQuit(q)) if q.running()
        ),
        "q quit at once during a run"
    );
    assert!(!b.app.quit);
    assert!(b.screen(160, 40).contains("A run is in progress"));
    b.key(KeyCode::Char('q'));
    assert!(b.app.quit);
    let started = Instant::now();
    b.driver.shutdown(&mut b.app, Duration::from_secs(5)).await;
    assert!(started.elapsed() < Duration::from_secs(5));
    let saved: Vec<_> = std::fs::read_dir(b.runs_dir())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .collect();
    assert_eq!(saved.len(), 1, "the cancelled run was not saved");
    let text = std::fs::read_to_string(saved[0].path()).unwrap();
    assert!(text.contains("\"cancelled\""), "{text}");
}

/// Item 9: after a run, the failed node is selected with its Error tab;
/// after a successful re-run of it, the inspector leaves the Error tab.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failure_is_shown_and_a_fix_leaves_the_error_tab() {
    let text = "vars:\n  ID: u-404\npipe:\n  - id: find\n    tool: search_users\n    args: { query: carol }\n  - id: details\n    tool: get_user_details\n    args: { user_id: \"${var.ID}\" }\n";
    let mut b = Bench::open(text).await;
    b.run_to_end().await;
    assert_eq!(
        b.app.selected_index(),
        Some(1),
        "the failed node is not selected"
    );
    assert_eq!(b.app.inspector.tab(), Tab::Error);
    assert!(b.screen(140, 30).contains("no user with id"));
    b.edit_to(&text.replace("u-404", "u1")).await;
    b.until("details is stale", |a| {
        a.visuals[1].status == NodeStatus::Stale
    })
    .await;
    let screen = b.screen(140, 30);
    assert!(
        screen.contains("stale · last run: ✗ failed"),
        "a stale node's header reads as if current:\n{screen}"
    );
    b.key(KeyCode::Char('r'));
    b.until("details is ok", |a| a.visuals[1].status == NodeStatus::Ok)
        .await;
    b.until("the re-run ends", finished).await;
    assert_eq!(
        b.app.inspector.tab(),
        Tab::Output,
        "the inspector stays on an empty Error tab"
    );
    assert_eq!(b.status_of("find"), NodeStatus::Ok);
}

/// README's tour is what the workbench draws on the shipped example with
/// the slip the README names, on the line it names (durations aside).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_tour_is_what_the_workbench_draws() {
    let root = root();
    let example = std::fs::read_to_string(root.join("examples/search-then-update.yml")).unwrap();
    let right = "user_id: ${find.users[0].id}";
    let line = example
        .lines()
        .position(|l| l.contains(right))
        .expect("the example passes find's id")
        + 1;
    let slip = example.replace(right, "user_id: ${find.users[0].name}");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(
        readme.contains(&format!(
            "`user_id: ${{find.users[0].name}}` on line {line},"
        )),
        "README names another line than {line}"
    );
    let durations = |s: &str| {
        let mut out = String::new();
        let mut rest = s;
        while let Some(at) = rest.find(" ms") {
            let head = &rest[..at];
            let digits = head.len() - head.trim_end_matches(|c: char| c.is_ascii_digit()).len();
            out.push_str(&head[..head.len() - digits]);
            out.push_str(if digits > 0 { "N ms" } else { " ms" });
            rest = &rest[at + 3..];
        }
        out.push_str(rest);
        // A duration's width moves what follows it on the row: runs of
        // spaces are compared as one.
        out.lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    // The editor's title is the file's path, a temporary one here: the
    // first row is compared from the DAG pane on.
    let from_dag = |s: &str| match s.split_once('\n') {
        Some((first, rest)) => {
            let dag = first.find("┐┌").map_or(first, |i| &first[i..]);
            format!("{dag}\n{rest}")
        }
        None => s.to_owned(),
    };
    let start = readme.find("```text\n").expect("README's capture") + 8;
    let end = start + readme[start..].find("```").expect("its end");
    let shown = durations(readme[start..end].trim_end());
    // The capture's failed call took a few milliseconds; on a busy
    // machine it takes ten or more: durations are masked whatever their
    // width, so one run is compared.
    let mut b = Bench::open_as("search-then-update.yml", &slip).await;
    b.run_to_end().await;
    let drawn = durations(&b.screen(96, 21));
    assert_eq!(
        from_dag(&shown),
        from_dag(&drawn),
        "README's tour differs; the workbench draws:\n{drawn}"
    );
}

/// Issue 35, item 18: the Messages pane keeps what the run did (started,
/// finished and how) and says a save once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_keep_run_events_and_a_save_once() {
    let mut b = Bench::open(THREE).await;
    b.run_to_end().await;
    let texts: Vec<String> = b
        .app
        .messages
        .log()
        .iter()
        .map(|e| e.text.clone())
        .collect();
    assert!(
        texts.iter().any(|t| t.starts_with("run started: ")),
        "{texts:#?}"
    );
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("run completed: 3/3 ok in ")),
        "{texts:#?}"
    );
    b.app.focus = crate::app::Focus::Editor;
    b.ctrl('s');
    b.until("the save is said", |a| {
        a.messages
            .log()
            .iter()
            .any(|e| e.text.starts_with("saved "))
    })
    .await;
    // More ticks: the save is not said again.
    for _ in 0..3 {
        b.pump().await;
    }
    let saves = b
        .app
        .messages
        .log()
        .iter()
        .filter(|e| e.text.starts_with("saved "))
        .count();
    assert_eq!(saves, 1);
}

/// Issue 35, item 3: a fan-out whose iterations all failed says so beside
/// its counter (`4/4✗4`), live and in the record, instead of `4/4` alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fan_out_counter_shows_its_failed_iterations() {
    let text = "\
compositions:
  - name: fan
    nodes:
      - id: items
        tool: echo
        mock: { result: [a, b, c, d] }
      - id: each
        needs: [items]
        for_each: ${items[*]}
        tool: fail
        args: { message: \"no ${item}\" }
";
    let mut b = Bench::open(text).await;
    b.key(KeyCode::F(5));
    b.until("the run ends", finished).await;
    assert_eq!(b.app.visuals[1].progress, Some((4, 4)));
    assert_eq!(b.app.visuals[1].failed_iterations, 4);
    let screen = b.screen(140, 30);
    assert!(screen.contains("4/4 ✗4"), "{screen}");
}

/// Item 9: a cancelled fan-out accounts for every item, started or not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_fan_out_counts_every_item() {
    let text = "\
compositions:
  - name: fan
    nodes:
      - id: items
        tool: echo
        mock: { result: [20, 20, 20, 20, 20, 20, 20, 20, 20000, 20000, 20000, 20000, 20000, 20000, 20000, 20000] }
      - id: each
        needs: [items]
        for_each: ${items[*]}
        max_concurrency: 4
        tool: slow
        args: { ms: \"${item}\" }
";
    let mut b = Bench::open(text).await;
    b.key(KeyCode::F(5));
    b.until("eight items are done", |a| {
        a.visuals[1].progress.is_some_and(|(done, _)| done >= 8)
    })
    .await;
    // Let the slow ones start.
    tokio::time::sleep(Duration::from_millis(300)).await;
    b.key(KeyCode::Char('x'));
    b.until("the run is cancelled", finished).await;
    assert_eq!(b.app.visuals[1].progress, Some((8, 16)));
    let rec = b.app.visuals[1].record.clone().unwrap();
    assert_eq!(rec.iterations.len(), 16, "items that never ran are missing");
    assert!(
        rec.iterations
            .iter()
            .any(|i| i.status == NodeStatus::Cancelled && i.started_at.is_none()),
        "no never-started item is recorded"
    );
    let screen = b.screen(140, 30);
    assert!(screen.contains("8/16"), "{screen}");
}

/// Item 9: one Ctrl-Z undoes a reload from disk, and the other nodes keep
/// their results.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_undo_takes_back_a_reload() {
    let mut b = Bench::open(THREE).await;
    b.run_to_end().await;
    let path: PathBuf = b.app.editor.path().to_path_buf();
    // Another program rewrites the file (mtime must move on).
    tokio::time::sleep(Duration::from_millis(1100)).await;
    std::fs::write(&path, THREE.replace("subject: hello", "subject: changed")).unwrap();
    b.until("the change is reloaded and adopted", |a| {
        a.editor.text().contains("changed") && a.visuals[2].status == NodeStatus::Stale
    })
    .await;
    b.app.focus = crate::app::Focus::Editor;
    b.ctrl('z');
    assert_eq!(
        b.app.editor.text(),
        THREE,
        "one undo does not restore the text"
    );
    b.until("the plan is adopted", |a| !a.editor.validating())
        .await;
    for _ in 0..5 {
        b.pump().await;
    }
    assert_eq!(b.status_of("find"), NodeStatus::Ok);
    assert_eq!(b.status_of("details"), NodeStatus::Ok);
    assert!(b.app.visuals[0].record.is_some());
    let _ = Path::new("");
}

/// Item 9: the status line says what is true now, not an old message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_line_drops_stale_messages() {
    let mut b = Bench::open(THREE).await;
    b.app.focus = crate::app::Focus::Editor;
    b.key(KeyCode::Char('#'));
    b.ctrl('s');
    assert!(b.status_line().contains("saved"), "{}", b.status_line());
    b.key(KeyCode::Char('#'));
    let line = b.status_line();
    assert!(line.contains("unsaved"), "{line}");
    assert!(!line.contains("saved /"), "stale: {line}");
}

/// Letters typed into the inspector's jq box arrive once, even those
/// bound to actions (`s`, `e`, `r`, `d` …).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_jq_box_gets_each_letter_once() {
    let mut b = Bench::open(THREE).await;
    b.run_to_end().await;
    b.select("find");
    while b.app.focus != crate::app::Focus::Inspector {
        b.key(KeyCode::Tab);
    }
    b.key(KeyCode::Char('/'));
    for c in ".users | length".chars() {
        b.key(KeyCode::Char(c));
    }
    assert_eq!(b.app.inspector.filter_text(), ".users | length");
    assert!(b.app.overlay.is_none(), "a letter also ran its action");
    assert!(!b.app.quit);
}

/// Item 8: two nodes of one wave on one stdio server both ask. Both
/// questions reach the person, queued ("1 of 2"), each node shows `?`;
/// answering the first does not cancel the second; each node ends with the
/// values typed for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_questions_at_once_both_reach_the_person() {
    let python = python();
    let server = root().join("tests/interop/hitl_server.py");
    let text = format!(
        "servers:\n  hitl:\n    command: {}\n    args: [{}]\ncompositions:\n  - name: both\n    nodes:\n      - id: a\n        server: hitl\n        tool: signup\n        args: {{reason: one}}\n      - id: b\n        server: hitl\n        tool: signup\n        args: {{reason: two}}\n",
        python.display(),
        server.display()
    );
    let mut b = Bench::open(&text).await;
    b.key(KeyCode::F(5));
    b.until("both questions wait", |a| a.asks.len() == 2).await;
    assert!(
        b.app.visuals.iter().all(|v| v.asking),
        "a queued node shows no ?"
    );
    let screen = b.screen(120, 34);
    assert!(screen.contains("1 of 2"), "{screen}");
    let first = b.app.asks.current().and_then(|p| p.question().node.clone());
    for name in ["Ada", "Bob"] {
        b.until("a question is open", |a| !a.asks.is_empty()).await;
        for c in name.chars() {
            b.key(KeyCode::Char(c));
        }
        b.key(KeyCode::Tab);
        b.key(KeyCode::Char('4'));
        b.key(KeyCode::Char('2'));
        b.key(KeyCode::Enter);
        // The answer goes out; the other question stays.
        for _ in 0..5 {
            b.pump().await;
        }
    }
    b.until("the run finishes", finished).await;
    // On stdio a question names no call, so which node's trace keeps an
    // exchange is pipewright's best guess; that both were asked, answered
    // and kept is not.
    let mut names = Vec::new();
    let mut kept = 0;
    for (i, v) in b.app.visuals.iter().enumerate() {
        let rec = v
            .record
            .clone()
            .unwrap_or_else(|| panic!("node {i} has no record"));
        assert_eq!(rec.output["action"], "accept", "node {i}: {:#}", rec.output);
        kept += rec.extras.interactions.len();
        names.push(rec.output["name"].as_str().unwrap_or("").to_owned());
    }
    assert_eq!(kept, 2, "an exchange was not kept");
    assert!(first.is_some());
    names.sort();
    assert_eq!(names, ["Ada", "Bob"]);
}

/// Item 3: under a cap below a cent, `e` says what `plan` says (4 calls,
/// $0.0060, OVER BUDGET) and F5 stops before the first paid call with
/// `run`'s words, spending nothing; the cap never reads `$0.00`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_workbench_plans_and_spends_like_the_cli() {
    let text = std::fs::read_to_string(root().join("examples/paid-digest.yml"))
        .unwrap()
        .replace("max_cost_usd: 0.01,", "max_cost_usd: 0.003,");
    let mut b = Bench::open(&text).await;
    b.key(KeyCode::Char('e'));
    let screen = b.screen(160, 40);
    assert!(screen.contains("total 4 call(s) · $0.0060"), "{screen}");
    assert!(screen.contains("OVER BUDGET"), "{screen}");
    assert!(screen.contains("max_cost_usd $0.0030"), "{screen}");
    b.key(KeyCode::Esc);
    b.key(KeyCode::F(5));
    let mut said = String::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !(finished(&b.app) && b.app.trace.is_some()) {
        assert!(Instant::now() < deadline, "the run did not end");
        b.pump().await;
        if let Some(m) = &b.app.messages.status() {
            said = m.text.clone();
        }
    }
    assert_eq!(
        b.app.run,
        RunState::Finished(pipewright_engine::run::trace::RunStatus::BudgetExceeded)
    );
    assert!(
        said.contains(
            "$0.0000 spent plus $0.0060 projected for `summaries` would exceed the cap of $0.0030"
        ),
        "{said}"
    );
    let line = b.status_line();
    assert!(line.contains("$0.0000 of $0.0030"), "{line}");
    assert_eq!(b.status_of("summaries"), NodeStatus::Skipped);
}

/// Item 4: every case runs (`A`), and the Results view lists each with
/// PASS/FAIL, its expectations and the output, in `run`'s words; `c`
/// picks a case for the next run, and the status bar names it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_case_runs_and_the_results_show_each() {
    let text = std::fs::read_to_string(root().join("examples/cases.yml"))
        .unwrap()
        // One case that fails its expectation, so FAIL shows too.
        .replace("matcher: { gte: 5 }", "matcher: { gte: 50 }");
    let mut b = Bench::open(&text).await;
    assert!(
        b.status_line().contains("lookup [one-match]"),
        "{}",
        b.status_line()
    );
    b.key(KeyCode::Char('A'));
    b.until("three cases ran", |a| {
        a.results.rows().len() == 3 && finished(a) && a.trace.is_some()
    })
    .await;
    b.key(KeyCode::Char('v'));
    let screen = b.screen(160, 40);
    for line in [
        "composition [PASS] lookup [one-match]",
        "composition [FAIL] lookup [everyone]",
        "composition [PASS] lookup [nobody]",
        "✓ output.count {\"exact\":1} → actual 1",
        "✗ output.count {\"gte\":50} → actual 8",
        "results: 2 passed, 1 failed",
    ] {
        assert!(screen.contains(line), "missing {line:?}:\n{screen}");
    }
    assert!(screen.contains("\"count\":1}"), "{screen}");
    b.key(KeyCode::Esc);
    // Three runs were saved, one per case.
    let saved = std::fs::read_dir(b.runs_dir())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "json"))
        })
        .count();
    assert_eq!(saved, 3);
    // `c` picks the next case; F5 runs it alone.
    b.key(KeyCode::Char('c'));
    assert!(b.status_line().contains("lookup ["), "{}", b.status_line());
    let before = b.app.opts.case.clone();
    b.run_to_end().await;
    assert_eq!(
        b.app.trace.as_ref().unwrap().composition.case,
        before,
        "F5 ran another case than the one picked"
    );
}

/// Item 4: moving the editor's cursor into another composition switches
/// the DAG (and the next run) to it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cursor_in_another_composition_switches_to_it() {
    let text = "compositions:\n  - name: first\n    nodes:\n      - id: a\n        tool: echo\n        args: { message: one }\n  - name: second\n    nodes:\n      - id: b\n        tool: echo\n        args: { message: two }\n      - id: c\n        tool: echo\n        args: { message: three }\n";
    let mut b = Bench::open(text).await;
    assert_eq!(b.app.comp.as_ref().unwrap().name, "first");
    b.app.focus = crate::app::Focus::Editor;
    for _ in 0..9 {
        b.key(KeyCode::Down);
    }
    assert_eq!(b.app.comp.as_ref().unwrap().name, "second");
    assert!(
        b.screen(120, 30).contains("DAG second"),
        "{}",
        b.screen(120, 30)
    );
    b.run_to_end().await;
    assert_eq!(b.app.trace.as_ref().unwrap().composition.name, "second");
    b.key(KeyCode::Up);
    for _ in 0..8 {
        b.key(KeyCode::Up);
    }
    assert_eq!(b.app.comp.as_ref().unwrap().name, "first");
}

/// Item 7: History opens a run as it was — its own DAG from the file it
/// ran (renamed nodes do not leak in, the failed node is there), its real
/// timeline, read-only; Esc brings back the live workbench as it is now;
/// `D` shows `runs diff`'s field-level differences.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_opens_a_run_as_it_was() {
    let mut b = Bench::open(FOUR).await;
    b.run_to_end().await;
    let first_run = b.app.trace.clone().unwrap();
    // The file changes: a node renamed, an argument changed.
    let edited = FOUR
        .replace("id: second", "id: renamed")
        .replace("message: four", "message: vier");
    b.edit_to(&edited).await;
    b.run_to_end().await;
    let second_run = b.app.trace.clone().unwrap();

    b.key(KeyCode::Char('H'));
    // Newest first: the older run is the second row.
    b.key(KeyCode::Down);
    b.key(KeyCode::Enter);
    let ids: Vec<String> = b
        .app
        .comp
        .as_ref()
        .unwrap()
        .nodes
        .iter()
        .map(|n| n.id.clone())
        .collect();
    assert_eq!(ids, ["first", "second", "third", "fourth"]);
    let screen = b.screen(140, 34);
    assert!(screen.contains("✗ third"), "{screen}");
    assert!(
        !screen.contains("renamed"),
        "today's file leaks in:\n{screen}"
    );
    assert!(screen.contains(&first_run.run_id), "{screen}");
    // Its timeline: the bars end where the run ended.
    b.key(KeyCode::Char('T'));
    let end = b
        .app
        .timeline_bars()
        .iter()
        .filter_map(|bar| bar.span.map(|s| s.1))
        .max()
        .unwrap();
    let total = first_run.composition.duration_ms;
    assert!(
        end <= total && end + 200 >= total,
        "timeline ends at {end} ms of a {total} ms run"
    );
    assert!(b.screen(140, 34).contains(&format!("{total} ms")));
    b.key(KeyCode::Char('T'));
    // Run keys are refused while it is open.
    b.key(KeyCode::F(5));
    assert!(b.status_line().contains("read-only"), "{}", b.status_line());
    // Esc: the live workbench, with today's nodes and records.
    b.key(KeyCode::Esc);
    assert!(b.app.viewing.is_none());
    let live_ids: Vec<String> = b
        .app
        .comp
        .as_ref()
        .unwrap()
        .nodes
        .iter()
        .map(|n| n.id.clone())
        .collect();
    assert_eq!(live_ids, ["first", "renamed", "third", "fourth"]);
    assert!(b.app.visuals[1].record.is_some());
    assert_eq!(b.app.editor.text(), edited, "the buffer changed");

    // D on the older run: field-level differences against the last run.
    b.key(KeyCode::Char('H'));
    b.key(KeyCode::Down);
    b.key(KeyCode::Char('D'));
    let screen = b.screen(160, 40);
    assert!(
        screen.contains(&format!(
            "runs {} → {}",
            first_run.run_id, second_run.run_id
        )),
        "{screen}"
    );
    assert!(screen.contains("node fourth"), "{screen}");
    assert!(screen.contains("\"four\" → \"vier\""), "{screen}");
    assert!(screen.contains("difference(s)"), "{screen}");
}

/// Item 10: the Raw tab shows the wire messages — the request and the
/// response with `jsonrpc` and `id`, and the notifications the server sent
/// during the call — while the record keeps the result once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_raw_tab_shows_the_wire_messages() {
    let python = python();
    let server = root().join("tests/interop/hitl_server.py");
    let text = format!(
        "servers:\n  hitl:\n    command: {}\n    args: [{}]\npipe:\n  - id: counted\n    server: hitl\n    tool: count\n    args: {{ n: 2 }}\n",
        python.display(),
        server.display()
    );
    let mut b = Bench::open(&text).await;
    b.run_to_end().await;
    let rec = b.app.visuals[0].record.clone().unwrap();
    assert_eq!(
        rec.rpc["response"]["result"],
        serde_json::json!({"$ref": "#/raw"}),
        "the exchange holds a second copy of the result"
    );
    b.select("counted");
    b.app.inspector.set_tab(Tab::Raw);
    let mut screen = String::new();
    for _ in 0..50 {
        b.pump().await;
        screen = b.screen(200, 70);
        if screen.contains("notifications/progress") {
            break;
        }
    }
    assert!(screen.contains("\"jsonrpc\": \"2.0\""), "{screen}");
    assert!(screen.contains("\"method\": \"tools/call\""), "{screen}");
    assert!(screen.contains("notifications/progress"), "{screen}");
    assert!(screen.contains("notifications/message"), "{screen}");
    // The response (below the fold here) carries the result, and the id
    // of the request it answers.
    let wire = pipewright_engine::run::trace::wire_messages(&rec);
    let msgs = wire.as_array().unwrap();
    let response = msgs.last().unwrap();
    assert_eq!(response["jsonrpc"], "2.0");
    assert_eq!(response["id"], msgs[0]["id"]);
    let result = response["result"].to_string();
    assert!(
        result.contains("count") && result.contains("\"content\""),
        "{result}"
    );
}

/// Issue 24, item 4: a server that dies at start-up with a Python
/// traceback. The status line says where the rest is; the Messages pane
/// and the node's Error tab hold the traceback's last line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_dies_at_start_shows_its_whole_stderr() {
    let text = "\
servers:
  py:
    command: python3
    args: [-c, \"import nope_module_for_the_test\"]
pipe:
  - id: first
    server: py
    tool: anything
";
    let mut b = Bench::open(text).await;
    b.key(KeyCode::F(5));
    b.until("the start fails", |a| {
        a.run == RunState::Idle && a.messages.log().iter().any(|e| e.error)
    })
    .await;
    let line = b.status_line();
    assert!(line.contains("m: all of it"), "{line}");
    let screen = b.screen(200, 50);
    assert!(
        screen.contains("ModuleNotFoundError: No module named 'nope_module_for_the_test'"),
        "the Error tab holds the server's last words:\n{screen}"
    );
    b.key(KeyCode::Char('m'));
    let screen = b.screen(200, 50);
    assert!(
        screen.contains("Traceback (most recent call last):"),
        "{screen}"
    );
    assert!(screen.contains("ModuleNotFoundError"), "{screen}");
}

/// Issue 46: a server that cannot start gets the doctor's checklist in a
/// pane: `D` in the Messages pane runs it, the failing step and its fix
/// are shown, `r` runs it again and Esc goes back to the messages.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_cannot_start_gets_the_doctors_checklist() {
    let text = "\
servers:
  py:
    command: python3
    args: [-c, \"import nope_module_for_the_doctor\"]
pipe:
  - id: first
    server: py
    tool: anything
";
    let mut b = Bench::open(text).await;
    b.key(KeyCode::F(5));
    b.until("the start fails", |a| {
        a.run == RunState::Idle && a.messages.log().iter().any(|e| e.error)
    })
    .await;
    b.key(KeyCode::Char('m'));
    let screen = b.screen(200, 50);
    assert!(screen.contains("D: doctor for server py"), "{screen}");
    assert!(
        screen.contains("D doctor"),
        "the footer names the key:\n{screen}"
    );
    b.key(KeyCode::Char('D'));
    assert!(b.screen(200, 50).contains("examining server py"));
    b.until("the checklist comes", |a| {
        matches!(&a.overlay, Some(crate::overlay::Overlay::Doctor(d)) if !d.body()[0].starts_with("examining"))
    })
    .await;
    let screen = b.screen(200, 50);
    assert!(screen.contains("✓ command"), "{screen}");
    assert!(screen.contains("✗ alive"), "{screen}");
    assert!(
        screen.contains("nope_module_for_the_doctor"),
        "the stderr tail is in the step:\n{screen}"
    );
    assert!(
        screen.contains("fix: a stdio server keeps running"),
        "{screen}"
    );
    assert!(screen.contains("r run again"), "{screen}");
    b.key(KeyCode::Esc);
    assert!(matches!(
        b.app.overlay,
        Some(crate::overlay::Overlay::Messages(_))
    ));
}

/// Issue 24, item 5: `P` writes the recorded output into the file as the
/// node's `mock:`, one Ctrl-Z takes it back, and the node shows mocked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pin_writes_the_mock_into_the_file_as_one_undoable_edit() {
    let mut b = Bench::open(THREE).await;
    b.run_to_end().await;
    b.select("find");
    b.app.focus = crate::app::Focus::Dag;
    b.key(KeyCode::Char('P'));
    b.until("the mock is written", |a| a.editor.text().contains("mock:"))
        .await;
    b.until("the plan has the mock", |a| {
        !a.editor.validating() && a.visuals.first().is_some_and(|v| v.mocked)
    })
    .await;
    let text = b.app.editor.text();
    let at = text
        .find("    mock:\n      result:")
        .expect("under find, at its keys");
    assert!(at < text.find("- id: details").unwrap(), "{text}");
    assert!(text.contains("Carol"), "the recorded output: {text}");
    // Block YAML in the file's style, not pretty-printed JSON (issue 35,
    // item 21).
    assert!(
        text.contains(
            "      result:\n        users:\n          - id: u3\n            name: Carol Nguyen\n"
        ),
        "{text}"
    );
    assert!(!text.contains("result: {"), "{text}");
    assert!(b.status_line().contains("pinned"), "{}", b.status_line());
    b.key(KeyCode::Char('i'));
    b.ctrl('z');
    assert_eq!(
        b.app.editor.text(),
        THREE.trim_end_matches('\n').to_owned() + "\n"
    );
}

/// A finished run's `eval:` is judged in the background (the loop goes
/// on), Results shows each metric with the judge's reasoning, and `J`
/// judges again (in Results every run, in History the chosen one) with no
/// tool called: each judged again is saved as a new run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_run_is_judged_and_j_judges_it_again() {
    let j = judge::Judge::start();
    j.answer("rubric", judge::Reply::Grade(0.8));
    let text = format!(
        "compositions:\n  - name: judged\n    description: Find MCP packages.\n    nodes:\n      - id: search\n        tool: search_packages\n        args: {{ query: mcp }}\n    output: search\n    eval:\n      provider: {{ url: \"{}\", model: judge-1, timeout: 10s }}\n      rubric:\n        threshold: 0.7\n        criteria: [covers the query]\n",
        j.url
    );
    let mut b = Bench::open(&text).await;
    b.run_to_end().await;
    b.until("the judge answered", |a| {
        a.results
            .rows()
            .first()
            .is_some_and(|r| r.eval.first().is_some_and(|e| e.score.is_some()))
    })
    .await;
    b.key(KeyCode::Char('v'));
    let screen = b.screen(160, 40);
    for line in [
        "composition [PASS] judged",
        "eval rubric 0.80 ≥ 0.70 PASS",
        "scripted rubric verdict 0.8",
        "J judges every run listed again",
    ] {
        assert!(screen.contains(line), "missing {line:?}:\n{screen}");
    }
    let saved = |b: &Bench| {
        std::fs::read_dir(b.runs_dir())
            .map(|d| {
                d.filter(|e| {
                    e.as_ref()
                        .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "json"))
                })
                .count()
            })
            .unwrap_or(0)
    };
    assert_eq!(saved(&b), 1);
    let first = b.app.results.rows()[0].run_id.clone();
    // In Results, J judges the run listed again: a new run.
    j.answer("rubric", judge::Reply::Grade(0.5));
    b.key(KeyCode::Char('J'));
    b.until("the run is judged again", |a| {
        a.results.rows()[0].run_id != first
    })
    .await;
    assert!(!b.app.results.rows()[0].passed, "0.5 is under 0.7");
    assert_eq!(saved(&b), 2);
    b.key(KeyCode::Esc);
    // In History, J judges the chosen run again.
    b.key(KeyCode::Char('H'));
    let second = b.app.results.rows()[0].run_id.clone();
    b.key(KeyCode::Char('J'));
    b.until("the chosen run is judged again", |a| {
        a.results.rows()[0].run_id != second
    })
    .await;
    assert_eq!(saved(&b), 3);
    assert_eq!(j.seen().iter().filter(|s| s.metric == "rubric").count(), 3);
}

/// A run key pressed right after typing (before the debounced validation)
/// runs the text on screen, not the last parse; the node is not stale
/// after. Same for Ctrl-S, Esc, `r`; and a fresh error refuses the run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_key_right_after_typing_runs_the_text_on_screen() {
    let text = "pipe:\n  - id: say\n    tool: echo\n    args:\n      message: u6\n";
    let mut b = Bench::open(text).await;
    b.run_to_end().await;
    let message = |b: &Bench| {
        b.app.visuals[0]
            .record
            .as_ref()
            .map(|r| r.args["message"].clone())
    };
    assert_eq!(message(&b), Some("u6".into()));

    // Change the last character of line 5, then F5 at once.
    let retype = |b: &mut Bench, c: char| {
        b.ctrl('g');
        b.key(KeyCode::Char('5'));
        b.key(KeyCode::Enter);
        b.key(KeyCode::End);
        b.key(KeyCode::Backspace);
        b.key(KeyCode::Char(c));
    };
    b.key(KeyCode::Char('i'));
    let typed = Instant::now();
    retype(&mut b, '7');
    assert!(b.app.editor.text().contains("message: u7"));
    // F5 well within 10 ms of the last keystroke: long before the
    // debounced validation would have caught up.
    b.key(KeyCode::F(5));
    let pressed = typed.elapsed();
    b.until("the run finishes", |a| {
        matches!(a.run, RunState::Finished(_)) && a.trace.is_some()
    })
    .await;
    eprintln!("typed the change and pressed F5 {pressed:?} after the first keystroke");
    assert_eq!(message(&b), Some("u7".into()), "the run used the old parse");
    // The saved run holds the text on screen, and called with it.
    let runs = pipewright_engine::run::store::Runs::at(b.dir.path().join("data").join("runs"));
    b.until("the run is saved", |_| !runs.entries().is_empty())
        .await;
    let entry = runs.entries().into_iter().last().unwrap();
    let saved = runs.source(&entry).expect("the run keeps its file text");
    assert_eq!(
        saved,
        b.app.editor.text(),
        "the saved file text is the buffer"
    );
    assert!(saved.contains("message: u7"));
    let trace = runs.load(&entry).unwrap();
    assert_eq!(trace.nodes["say"].args["message"], "u7", "the saved call");
    for _ in 0..10 {
        b.pump().await;
    }
    assert_eq!(b.status_of("say"), NodeStatus::Ok, "{}", b.screen(120, 30));

    // Ctrl-S, Esc, r at once.
    retype(&mut b, '8');
    b.ctrl('s');
    b.key(KeyCode::Esc);
    b.key(KeyCode::Char('r'));
    b.until("the re-run finishes", |a| {
        a.visuals[0]
            .record
            .as_ref()
            .is_some_and(|r| r.args["message"] == "u8")
            && a.visuals[0].status == NodeStatus::Ok
    })
    .await;
    for _ in 0..10 {
        b.pump().await;
    }
    assert_eq!(b.status_of("say"), NodeStatus::Ok, "{}", b.screen(120, 30));

    // An error typed just now refuses the run with the usual sentence.
    b.key(KeyCode::Char('i'));
    b.ctrl('g');
    b.key(KeyCode::Char('5'));
    b.key(KeyCode::Enter);
    b.key(KeyCode::End);
    for c in " ${nope.x}".chars() {
        b.key(KeyCode::Char(c));
    }
    b.key(KeyCode::F(5));
    let line = b.status_line();
    assert!(line.contains("not run: the file has 1 error(s)"), "{line}");
    assert!(finished(&b.app), "a run started: {:?}", b.app.run);
}

/// `r` on a node below a stale one refuses, names the stale node and says
/// what to press; the node keeps its ◌ instead of a fresh ✓ on old data.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rerun_below_a_stale_node_refuses_and_names_it() {
    let mut b = Bench::open(THREE).await;
    b.run_to_end().await;
    b.edit_to(&THREE.replace("carol", "dave")).await;
    b.until("the readers are stale", |a| {
        a.visuals.iter().all(|v| v.status == NodeStatus::Stale)
    })
    .await;
    let old = b.app.visuals[1].record.clone().unwrap();
    b.select("details");
    b.key(KeyCode::Char('r'));
    let screen = b.screen(220, 30);
    let line = screen.lines().rev().nth(1).unwrap_or_default();
    assert!(
        line.contains("not run: `details` reads stale ◌ `find`"),
        "{line}"
    );
    assert!(line.contains("re-run `find` first"), "{line}");
    assert!(line.contains("F5 runs the whole file"), "{line}");
    for _ in 0..20 {
        b.pump().await;
    }
    assert_eq!(b.status_of("details"), NodeStatus::Stale);
    assert_eq!(b.app.visuals[1].record.as_ref().unwrap().args, old.args);
    // R below it too; on `find` itself it re-runs find and what follows.
    b.select("notify");
    b.key(KeyCode::Char('R'));
    assert!(b.status_line().contains("`find`"), "{}", b.status_line());
    b.select("find");
    b.key(KeyCode::Char('R'));
    b.until("find and its readers ran again", |a| {
        a.visuals[0].status == NodeStatus::Ok
            && a.visuals
                .iter()
                .all(|v| v.status.is_terminal() && v.status != NodeStatus::Stale)
    })
    .await;
    let rec = b.app.visuals[0].record.clone().unwrap();
    assert_eq!(rec.args["query"], "dave");
}

const TYPO: &str = "\
pipe:
  - id: find
    tool: search_user
    args: { query: ada }
";

impl Bench {
    /// The editor's marks, a line each (`line:col message hint`).
    fn marks(&self) -> String {
        self.app
            .editor
            .diagnostics()
            .iter()
            .map(|d| {
                format!(
                    "{}:{} {} {}\n",
                    d.span.start.line,
                    d.span.start.col,
                    d.message,
                    d.hint.as_deref().unwrap_or("")
                )
            })
            .collect()
    }

    /// Runs the loop until the editor marks something containing `what`.
    async fn until_marked(&mut self, what: &str) {
        let want = what.to_owned();
        let deadline = Instant::now() + Duration::from_secs(30);
        while !self.marks().contains(&want) {
            assert!(
                Instant::now() < deadline,
                "no mark with {want:?}; the marks:\n{}",
                self.marks()
            );
            self.pump().await;
        }
    }

    /// Pumps the loop for `ms` milliseconds.
    async fn idle(&mut self, ms: u64) {
        let end = Instant::now() + Duration::from_millis(ms);
        while Instant::now() < end {
            self.pump().await;
        }
    }

    fn saved_runs(&self) -> usize {
        std::fs::read_dir(self.runs_dir()).map_or(0, |d| d.count())
    }
}

/// Preflight as you type: a typo'd tool is marked at its place with
/// `run`'s did-you-mean before anything runs, `d` shows the problem (not
/// "within budget"), and F5 calls nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_typo_d_tool_is_marked_and_neither_d_nor_f5_lets_it_through() {
    let mut b = Bench::open(TYPO).await;
    b.until_marked("did you mean `search_users`?").await;
    let marks = b.marks();
    assert!(
        marks.contains("3:11 node `find`: server `demo` has no tool `search_user`"),
        "{marks}"
    );
    b.key(KeyCode::Char('d'));
    let screen = b.screen(160, 40);
    assert!(
        screen.contains("preflight failed: 1 problem(s)"),
        "{screen}"
    );
    assert!(screen.contains("did you mean `search_users`?"), "{screen}");
    assert!(!screen.contains("within budget"), "{screen}");
    b.key(KeyCode::Esc);
    b.key(KeyCode::F(5));
    let said = b
        .app
        .messages
        .status()
        .map(|m| m.text.clone())
        .unwrap_or_default();
    assert_eq!(
        said,
        "preflight: 1 problem(s) (see the editor); nothing was called"
    );
    b.idle(800).await;
    assert!(!b.app.session.is_open(), "a session was started");
    assert!(b.app.trace.is_none(), "something ran");
    assert_eq!(b.saved_runs(), 0);
}

/// F5 with a session already open (a run before) re-checks the edited
/// plan: the typo is refused, nothing reaches the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn f5_after_a_run_calls_nothing_once_an_edit_breaks_preflight() {
    let good = TYPO.replace("search_user\n", "search_users\n");
    let mut b = Bench::open(&good).await;
    b.run_to_end().await;
    let saved = b.saved_runs();
    assert!(saved > 0);
    assert_eq!(b.status_of("find"), NodeStatus::Ok);
    b.edit_to(TYPO).await;
    b.until_marked("did you mean `search_users`?").await;
    b.key(KeyCode::F(5));
    let said = b
        .app
        .messages
        .status()
        .map(|m| m.text.clone())
        .unwrap_or_default();
    assert!(said.starts_with("preflight: 1 problem(s)"), "{said}");
    b.idle(800).await;
    assert_eq!(b.saved_runs(), saved, "a second run was made");
    assert!(!b.app.run_in_progress());
    assert_ne!(b.status_of("find"), NodeStatus::Failed);
}

/// The quick-fix key applies the did-you-mean on the cursor's line, and
/// the mark clears.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_quick_fix_key_applies_the_suggestion_and_the_mark_clears() {
    let mut b = Bench::open(TYPO).await;
    b.until_marked("did you mean `search_users`?").await;
    b.app.focus = crate::app::Focus::Editor;
    b.app.editor.goto(3, 1);
    let footer = b.screen(160, 30);
    assert!(footer.contains("Alt-Enter quick fix"), "{footer}");
    b.press(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT));
    assert!(
        b.app.editor.text().contains("    tool: search_users\n"),
        "{}",
        b.app.editor.text()
    );
    b.until("the fix is validated", |a| !a.editor.validating())
        .await;
    b.idle(300).await;
    assert!(b.marks().is_empty(), "{}", b.marks());
    b.ctrl('z');
    assert!(b.app.editor.text().contains("tool: search_user\n"));
}

/// An argument of the wrong type for the tool's inputSchema is marked
/// before any run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_argument_of_the_wrong_type_is_marked() {
    let text = TYPO
        .replace("search_user\n", "search_users\n")
        .replace("ada", "5");
    let mut b = Bench::open(&text).await;
    b.until_marked("arguments do not fit `search_users`'s inputSchema: at /query")
        .await;
    // On the argument's own value, not the node's `- id:` line.
    assert!(
        b.marks()
            .starts_with("4:20 node `find`: arguments do not fit"),
        "{}",
        b.marks()
    );
    // The status bar counts it before F5 is refused.
    let status = b.status_line();
    assert!(status.contains("1 problem(s)"), "{status}");
    b.key(KeyCode::F(5));
    b.idle(500).await;
    assert_eq!(b.saved_runs(), 0);
}

/// The palette's "new pipeline": tools chosen from the demo server's list
/// (Space marks, in order), Enter writes a node each into the buffer as
/// one edit; the scaffold loads, and Ctrl-Z brings the old text back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_palette_writes_a_scaffold_of_the_chosen_tools() {
    let text = "pipe:\n  - id: say\n    tool: echo\n    args:\n      message: hi\n";
    let mut b = Bench::open(text).await;
    b.until("the tool lists came", |a| a.tools.lists().is_some())
        .await;
    b.key(KeyCode::Char(':'));
    for c in "new pipeline".chars() {
        b.key(KeyCode::Char(c));
    }
    b.key(KeyCode::Enter);
    let shown = b.screen(140, 30);
    assert!(shown.contains("new pipeline: a node per tool"), "{shown}");
    for c in "search_u".chars() {
        b.key(KeyCode::Char(c));
    }
    b.key(KeyCode::Char(' '));
    b.ctrl('u');
    for c in "get_user_d".chars() {
        b.key(KeyCode::Char(c));
    }
    b.key(KeyCode::Char(' '));
    let shown = b.screen(140, 30);
    assert!(shown.contains("[2] get_user_details"), "{shown}");
    b.key(KeyCode::Enter);
    let written = b.app.editor.text();
    let first = written
        .find("tool: search_users")
        .expect("a node for search_users");
    let second = written
        .find("tool: get_user_details")
        .expect("a node for get_user_details");
    assert!(first < second, "in the order chosen:\n{written}");
    b.until("the scaffold loads", |a| {
        a.comp.as_ref().is_some_and(|c| c.nodes.len() == 2)
    })
    .await;
    b.ctrl('z');
    assert_eq!(
        b.app.editor.text(),
        text,
        "one undo brings the old text back"
    );
}

/// Issue 35 item 1: `p` while the last call is in flight pauses; once
/// it finishes nothing is left, and the run is over (not `PAUSED 2/2 ok`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue35_item1_a_pause_on_the_last_call_ends_the_run_when_it_finishes() {
    let text = "pipe:\n  - id: a\n    tool: echo\n    args: { message: one }\n  - id: b\n    tool: slow\n    args: { ms: 600 }\n";
    let mut b = Bench::open(text).await;
    b.key(KeyCode::F(5));
    b.until("b runs", |a| a.visuals[1].status == NodeStatus::Running)
        .await;
    b.key(KeyCode::Char('p'));
    b.until("the pause is heard", |a| {
        matches!(a.run, RunState::Paused { .. }) || finished(a)
    })
    .await;
    b.until("b ended and with it the run", |a| {
        finished(a) && a.trace.is_some()
    })
    .await;
    let line = b.status_line();
    assert!(line.contains("DONE COMPLETED  2/2 ok"), "{line}");
    assert!(!line.contains("PAUSED"), "{line}");
}

/// Issue 35 item 11: a budget stop says in words what stopped it: the
/// badge reads `OVER BUDGET`, the node the gate kept from being called is
/// selected with the deciding sentence whole on its Error tab, and the
/// nodes after it say a cap would have been exceeded (nothing was spent).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue35_item11_a_budget_stop_names_the_blocked_node_in_words() {
    let text = std::fs::read_to_string(root().join("examples/paid-digest.yml"))
        .unwrap()
        .replace("max_cost_usd: 0.01,", "max_cost_usd: 0.003,");
    let mut b = Bench::open(&text).await;
    b.run_to_end().await;
    let line = b.status_line();
    assert!(line.contains("DONE OVER BUDGET"), "{line}");
    assert!(!line.contains("BUDGET_EXCEEDED"), "{line}");
    let summaries = b.app.comp.as_ref().unwrap().index_of("summaries");
    assert_eq!(
        b.app.dag.selected(),
        summaries,
        "the blocked node is selected"
    );
    assert_eq!(b.app.inspector.tab(), Tab::Error);
    let screen = b.screen(80, 24);
    assert!(
        screen.contains("not called: budget cap") && screen.contains("exceed the cap of $0.0030"),
        "{screen}"
    );
    for v in &b.app.visuals {
        let why = v.record.as_ref().and_then(|r| r.skip_reason.clone());
        assert!(
            !why.as_deref().unwrap_or_default().contains("was exceeded"),
            "nothing was spent over the cap: {why:?}"
        );
    }
}

/// Issue 35, item 8: a pause is a labelled gap in the timeline (`⏸` with
/// its length, its columns marked `┊`), live and in the saved run, which
/// keeps when each pause began and how long it lasted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pause_is_a_labelled_gap_in_the_timeline() {
    let text = "pipe:\n  - id: a\n    tool: slow\n    args: { ms: 150 }\n  - id: b\n    tool: slow\n    args: { ms: 150 }\n";
    let mut b = Bench::open(text).await;
    b.select("b");
    b.key(KeyCode::Char('b'));
    b.key(KeyCode::F(5));
    b.until(
        "the run stops at b",
        |a| matches!(&a.run, RunState::Paused { before: Some(d), .. } if d == "b"),
    )
    .await;
    // Long enough to be seen on the axis beside two 150 ms calls.
    b.idle(400).await;
    b.key(KeyCode::Char('T'));
    let live = b.screen(120, 20);
    assert!(
        live.contains("⏸"),
        "the live pause is not labelled:\n{live}"
    );
    b.key(KeyCode::F(8));
    b.until("it finishes", finished).await;
    let done = b.screen(120, 20);
    assert!(done.contains("⏸") && done.contains("┊"), "{done}");
    let trace = b.app.trace.as_ref().expect("the run's trace");
    assert_eq!(
        trace.composition.pauses.len(),
        1,
        "{:?}",
        trace.composition.pauses
    );
    let p = trace.composition.pauses[0];
    assert!(p.ms >= 300, "{p:?}");
    assert!(trace.composition.paused_ms >= p.ms);
}

/// Which question the modal shows now, if any: `form`, `url` or `sample`.
fn asking(a: &App) -> Option<&'static str> {
    a.asks.current().map(|p| match p.state() {
        AskState::Form(_) => "form",
        AskState::Url { .. } => "url",
        AskState::Sample(_) => "sample",
    })
}

impl Bench {
    /// Tabs through the open form until field `name` has the keys.
    fn focus_field(&mut self, name: &str) {
        for _ in 0..8 {
            let Some(AskState::Form(form)) = self.app.asks.current().map(|p| p.state()) else {
                panic!("no form is open");
            };
            if form.fields[form.focus].name == name {
                return;
            }
            self.key(KeyCode::Tab);
        }
        panic!("the form has no field {name}");
    }
}

/// Item 22: `examples/ask.yml` against the built-in demo server needs
/// nothing installed. The form (a string, a choice, a yes/no), the link and
/// the model's reply are each answered in the modal, and what was typed
/// reaches the tools' results and the trace, by `workbench`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue35_item22_the_demo_servers_questions_are_answered_in_the_modal() {
    let text = std::fs::read_to_string(root().join("examples/ask.yml")).unwrap();
    let mut b = Bench::open_as("ask.yml", &text).await;
    b.key(KeyCode::F(5));
    b.until("the form is open", |a| asking(a) == Some("form"))
        .await;
    b.focus_field("signature");
    for c in "Ada".chars() {
        b.key(KeyCode::Char(c));
    }
    b.focus_field("tone");
    // friendly (the default) → formal.
    b.key(KeyCode::Right);
    b.key(KeyCode::Enter);
    b.until("the link is shown", |a| asking(a) == Some("url"))
        .await;
    b.key(KeyCode::Enter);
    b.until("the model's reply is asked for", |a| {
        asking(a) == Some("sample")
    })
    .await;
    for c in "Hi Ada".chars() {
        b.key(KeyCode::Char(c));
    }
    b.ctrl('s');
    b.until("the run finishes", finished).await;
    let record = |b: &Bench, id: &str| {
        let i = b.app.comp.as_ref().unwrap().index_of(id).unwrap();
        b.app.visuals[i]
            .record
            .clone()
            .unwrap_or_else(|| panic!("{id} has no record"))
    };
    let confirm = record(&b, "confirm");
    assert_eq!(
        confirm.output,
        serde_json::json!({"to": "ada@example.test", "action": "accept",
                           "signature": "Ada", "tone": "formal", "send": true})
    );
    let by = serde_json::to_value(confirm.extras.interactions[0].by).unwrap();
    assert_eq!(by, "workbench");
    assert_eq!(record(&b, "connect").output["connected"], true);
    let draft = record(&b, "draft");
    assert_eq!(draft.output["text"], "Hi Ada", "{:#}", draft.output);
    assert_eq!(b.status_of("send"), NodeStatus::Ok);
}

/// Issue 35 item 10: History's diff shows the file edit that made the
/// difference (its lines, with their numbers) before the trace fields, and
/// a changed node with a breakpoint shows both `●` and `Δ` in the DAG.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue35_item10_history_diff_shows_the_file_edit_and_delta_beside_a_breakpoint() {
    let mut b = Bench::open(FOUR).await;
    b.run_to_end().await;
    b.edit_to(&FOUR.replace("message: four", "message: vier"))
        .await;
    b.run_to_end().await;
    b.select("fourth");
    b.key(KeyCode::F(9));
    let at = b.app.comp.as_ref().unwrap().index_of("fourth").unwrap();
    assert!(b.app.visuals[at].breakpoint, "F9 set a breakpoint");
    b.key(KeyCode::Char('H'));
    b.key(KeyCode::Down);
    b.key(KeyCode::Char('D'));
    let screen = b.screen(160, 40);
    assert!(
        screen.contains("file: 1 line(s) removed, 1 added"),
        "{screen}"
    );
    assert!(
        screen.contains("- 14 │     args: { message: four }")
            && screen.contains("+ 14 │     args: { message: vier }"),
        "{screen}"
    );
    assert!(screen.contains("\"four\" → \"vier\""), "{screen}");
    b.key(KeyCode::Esc);
    let screen = b.screen(160, 40);
    let row = screen
        .lines()
        .find(|l| l.contains(" fourth"))
        .expect("the node on screen");
    assert!(row.contains("●") && row.contains("fourthΔ"), "{row}");
}

/// Issue 35 item 16: `/` searches History: typing finds a run, `n`/`N`
/// select the next and previous match (Enter then opens that one), the
/// count is in the status line; the diff view `D` opens is searched too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue35_item16_slash_searches_history_and_its_diff() {
    let mut b = Bench::open(FOUR).await;
    b.run_to_end().await;
    let older = b.app.trace.as_ref().unwrap().run_id.clone();
    b.run_to_end().await;
    b.key(KeyCode::Char('H'));
    assert_eq!(b.app.overlay.as_ref().map(|o| o.name()), Some("history"));
    b.key(KeyCode::Char('/'));
    for c in older.chars() {
        b.key(KeyCode::Char(c));
    }
    b.key(KeyCode::Enter);
    let line = b.status_line();
    assert!(
        line.contains(&format!("/{older}  match 1/1 (n/N)")),
        "{line}"
    );
    b.key(KeyCode::Char('n'));
    b.key(KeyCode::Enter);
    assert_eq!(
        b.app.viewing.as_ref().map(|v| v.entry.id.clone()),
        Some(older.clone()),
        "the run found is the one opened"
    );
    b.key(KeyCode::Esc);
    b.key(KeyCode::Char('H'));
    b.key(KeyCode::Down);
    b.key(KeyCode::Char('D'));
    b.key(KeyCode::Char('/'));
    for c in "file".chars() {
        b.key(KeyCode::Char(c));
    }
    let line = b.status_line();
    assert!(line.contains("/file█  match 1/1 (n/N)"), "{line}");
}

/// Issue 35 item 17: from History a saved run is exported (`E` then
/// `j`/`u`/`o`: the files `run --format json|junit` and `runs export
/// --otlp` write, next to the pipeline file, the path said), its file
/// text restored as one undoable edit (`R`), and run again (F5 there).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue35_item17_history_exports_restores_and_reruns_a_saved_run() {
    let mut b = Bench::open(FOUR).await;
    b.run_to_end().await;
    let older = b.app.trace.as_ref().unwrap().run_id.clone();
    let edited = FOUR.replace("message: four", "message: vier");
    b.edit_to(&edited).await;
    b.run_to_end().await;
    let dir = b.dir.path().to_path_buf();
    for (key, suffix, has) in [
        ('j', "json", format!("\"run_id\": \"{older}\"")),
        ('u', "junit.xml", "<testsuites>".to_owned()),
        ('o', "otlp.json", "\"resourceSpans\"".to_owned()),
    ] {
        b.key(KeyCode::Char('H'));
        b.key(KeyCode::Down);
        b.key(KeyCode::Char('E'));
        assert!(
            b.screen(160, 40).contains("u JUnit XML"),
            "the footer says the formats"
        );
        b.key(KeyCode::Char(key));
        let path = dir.join(format!("pipeline.{older}.{suffix}"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        assert!(text.contains(&has), "{suffix}: {text}");
        let line = b.status_line();
        assert!(line.contains(&format!("exported run {older} to")), "{line}");
        b.key(KeyCode::Esc);
    }
    // R: the older run's file text becomes the buffer, one undo away.
    b.key(KeyCode::Char('H'));
    let footer = b.screen(200, 40);
    assert!(footer.contains("R restore file"), "{footer}");
    b.key(KeyCode::Down);
    b.key(KeyCode::Char('R'));
    assert!(b.app.overlay.is_none());
    assert_eq!(b.app.editor.text(), FOUR);
    b.ctrl('z');
    assert_eq!(b.app.editor.text(), edited, "one undo takes it back");
    // F5 in History: that file version, run (Esc leaves the editor R
    // focused).
    b.key(KeyCode::Esc);
    b.key(KeyCode::Char('H'));
    b.key(KeyCode::Down);
    b.key(KeyCode::F(5));
    assert_eq!(b.app.editor.text(), FOUR);
    b.until("the restored text ran", |a| {
        finished(a) && a.trace.as_ref().is_some_and(|t| t.run_id != older)
    })
    .await;
    let out = b.app.trace.as_ref().unwrap().nodes["fourth"]
        .output
        .tree()
        .clone();
    assert!(
        out.to_string().contains("four") && !out.to_string().contains("vier"),
        "{out}"
    );
}

/// A fan-out of eight `slow` calls, three at a time, for issue 35's
/// items 4 to 6.
const SLOW_FAN: &str = "\
compositions:
  - name: fan
    nodes:
      - id: items
        tool: echo
        mock: { result: [{ms: 1500}, {ms: 1500}, {ms: 1500}, {ms: 1500}, {ms: 1500}, {ms: 1500}, {ms: 1500}, {ms: 1500}] }
      - id: each
        needs: [items]
        for_each: ${items[*]}
        max_concurrency: 3
        tool: slow
        args: { ms: \"${item.ms}\" }
";

/// The inspector's area on a 140×30 screen, as text (the right-hand pane).
fn inspector_rows(screen: &str) -> Vec<String> {
    screen
        .lines()
        .map(|l| l.chars().skip(70).collect::<String>())
        .collect()
}

/// Issue 35, item 4: while a fan-out runs, its Iterations tab lists the
/// iterations started so far with their status and a time that moves, and
/// the inspector's spinner turns with the DAG's tick.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_fan_out_shows_its_iterations_live() {
    let mut b = Bench::open(SLOW_FAN).await;
    b.select("each");
    while b.app.focus != crate::app::Focus::Inspector {
        b.key(KeyCode::Tab);
    }
    b.key(KeyCode::Char('5'));
    assert_eq!(b.app.inspector.tab(), Tab::Iterations);
    b.key(KeyCode::F(5));
    b.until("three iterations run", |a| {
        a.visuals[1]
            .iterations
            .iter()
            .filter(|i| i.status == NodeStatus::Running)
            .count()
            == 3
    })
    .await;
    let first = b.screen(140, 30);
    assert!(!first.contains("not a fan-out"), "{first}");
    let running_rows = |s: &str| {
        inspector_rows(s)
            .into_iter()
            .filter(|l| {
                l.trim_start_matches('│')
                    .trim_start()
                    .starts_with(char::is_numeric)
                    && l.contains(" running ")
            })
            .count()
    };
    assert_eq!(running_rows(&first), 3, "{first}");
    // The spinner is the DAG's: the tick's frame, in the inspector too.
    let frame = |b: &Bench| crate::theme::SPINNER[(b.app.tick as usize) % 10];
    let glyph = frame(&b);
    assert!(
        inspector_rows(&first)
            .iter()
            .any(|l| l.contains(&format!("{glyph} running"))),
        "the inspector's spinner is not at the tick's frame {glyph}:\n{first}"
    );
    // Time moves: a later screen of the same rows differs (elapsed, and
    // the spinner's frame).
    let deadline = Instant::now() + Duration::from_secs(10);
    let later = loop {
        b.pump().await;
        let s = b.screen(140, 30);
        let rows = |s: &str| -> Vec<String> {
            inspector_rows(s)
                .into_iter()
                .filter(|l| l.trim_start_matches('│').trim_start().starts_with("1 "))
                .collect()
        };
        if rows(&s) != rows(&first) && frame(&b) != glyph {
            break s;
        }
        assert!(Instant::now() < deadline, "nothing moved:\n{s}");
    };
    assert!(
        inspector_rows(&later)
            .iter()
            .any(|l| l.contains(&format!("{} running", frame(&b)))),
        "{later}"
    );
    b.until("an iteration ends", |a| {
        a.visuals[1]
            .iterations
            .iter()
            .any(|i| i.status == NodeStatus::Ok)
    })
    .await;
    let s = b.screen(140, 30);
    assert!(
        inspector_rows(&s).iter().any(|l| l.contains("✓ ok")),
        "an ended iteration is not shown ok:\n{s}"
    );
    b.until("the run ends", finished).await;
    let s = b.screen(140, 30);
    assert_eq!(
        inspector_rows(&s)
            .iter()
            .filter(|l| {
                l.trim_start_matches('│')
                    .trim_start()
                    .starts_with(char::is_numeric)
                    && l.contains("✓ ok")
            })
            .count(),
        8,
        "{s}"
    );
}

/// Pumps the loop until a 200×60 screen shows `want`; that screen.
async fn screen_with(b: &mut Bench, want: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        b.pump().await;
        let s = b.screen(200, 60);
        if s.contains(want) {
            return s;
        }
        assert!(Instant::now() < deadline, "no {want:?} in:\n{s}");
    }
}

/// Issue 35, item 6: the Raw tab labels each exchange (which iteration and
/// attempt, its start, duration and outcome), and Timing lists each
/// attempt with its time and error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_and_timing_tell_each_attempt_and_iteration() {
    let text = "\
compositions:
  - name: tries
    nodes:
      - id: warmup
        tool: flaky
        args: { key: warmup, failures: 2 }
        on_error: retry:3
      - id: items
        tool: echo
        mock: { result: [a, b, c, d] }
      - id: each
        needs: [items]
        for_each: ${items[*]}
        tool: echo
        args: { message: \"${item}\" }
";
    let mut b = Bench::open(text).await;
    b.run_to_end().await;
    b.select("warmup");
    while b.app.focus != crate::app::Focus::Inspector {
        b.key(KeyCode::Tab);
    }
    b.key(KeyCode::Char('6'));
    let s = screen_with(&mut b, "── attempt 1/3 · started ").await;
    assert!(s.contains(" · failed: "), "{s}");
    let find = |b: &mut Bench, what: &str| {
        b.key(KeyCode::Char('/'));
        for c in what.chars() {
            b.key(KeyCode::Char(c));
        }
        b.key(KeyCode::Enter);
    };
    find(&mut b, "attempt 3/3");
    let s = screen_with(&mut b, "── attempt 3/3 · started ").await;
    assert!(s.contains(" · ok ──"), "{s}");

    b.key(KeyCode::Char('4'));
    let s = b.screen(200, 60);
    for n in 1..=3 {
        assert!(s.contains(&format!("attempt {n}/3 · ")), "{s}");
    }
    let failed = s
        .lines()
        .filter(|l| l.contains("attempt 1/3") || l.contains("attempt 2/3"))
        .collect::<Vec<_>>();
    assert!(
        failed
            .iter()
            .all(|l| l.contains("✗") && l.contains("failed")),
        "{s}"
    );

    b.select("each");
    b.key(KeyCode::Char('6'));
    for i in 1..=4 {
        find(&mut b, &format!("iteration {i}/4"));
        let want = format!("── iteration {i}/4 · attempt 1/1 · started ");
        let s = screen_with(&mut b, &want).await;
        assert!(s.contains(" · ok ──"), "{s}");
    }
}

/// Issue 35, item 5: at a breakpoint on a fan-out whose parent finished,
/// Args shows each iteration's args resolved from the parent's output
/// (not `<from item.id>`); after the run, Args shows what each iteration
/// was called with, not `{"for_each": …, "items": 4}`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fan_out_at_a_breakpoint_shows_each_items_args() {
    let text = "\
compositions:
  - name: fan
    nodes:
      - id: users
        tool: echo
        mock: { result: [{id: u-1}, {id: u-2}, {id: u-3}, {id: u-4}] }
      - id: details
        needs: [users]
        for_each: ${users[*]}
        tool: echo
        args: { message: \"user ${item.id}\" }
";
    let mut b = Bench::open(text).await;
    b.select("details");
    b.key(KeyCode::Char('b'));
    b.key(KeyCode::F(5));
    b.until(
        "the run stops at details",
        |a| matches!(&a.run, RunState::Paused { before: Some(d), .. } if d == "details"),
    )
    .await;
    while b.app.focus != crate::app::Focus::Inspector {
        b.key(KeyCode::Tab);
    }
    b.key(KeyCode::Char('1'));
    b.key(KeyCode::Char('+'));
    let screen = b.screen(140, 34);
    assert!(
        !screen.contains("<from item"),
        "the preview does not resolve the items:\n{screen}"
    );
    for u in 1..=4 {
        assert!(screen.contains(&format!("\"user u-{u}\"")), "{screen}");
    }
    b.key(KeyCode::F(8));
    b.until("it finishes", finished).await;
    b.key(KeyCode::Char('+'));
    let screen = b.screen(140, 34);
    assert!(!screen.contains("\"items\": 4"), "{screen}");
    for u in 1..=4 {
        assert!(screen.contains(&format!("\"user u-{u}\"")), "{screen}");
    }
}

/// Issue 35 item 17: `E` then `c` in History writes the saved run as a
/// cassette next to the pipeline file, and `run --replay` answers every
/// call of the file from it, with the outputs the run had.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn issue35_item17_history_exports_a_run_as_a_cassette_that_replays() {
    let mut b = Bench::open(FOUR).await;
    b.run_to_end().await;
    let live = b.app.trace.clone().unwrap();
    b.key(KeyCode::Char('H'));
    b.key(KeyCode::Char('E'));
    assert!(
        b.screen(160, 40).contains("c cassette"),
        "the footer says it"
    );
    b.key(KeyCode::Char('c'));
    let path = b
        .dir
        .path()
        .join(format!("pipeline.{}.cassette.json", live.run_id));
    assert!(path.exists(), "{}", b.status_line());
    assert!(
        b.status_line().contains("exported run"),
        "{}",
        b.status_line()
    );

    // The file run again with every call answered from the cassette, as
    // `run --replay` runs it: a session whose caller is the cassette's
    // replayer (no server behind it), its trace as `--format json` prints
    // it.
    let cassette = pipewright_engine::run::cassette::Cassette::load(&path).unwrap();
    let replayer = std::sync::Arc::new(pipewright_engine::run::cassette::Replayer::new(
        &cassette,
        path.display().to_string(),
        "demo".into(),
        pipewright_engine::redact::Redactor::default(),
        None,
    ));
    let comp = b.app.comp.clone().unwrap();
    let mut session = pipewright_engine::run::session::start(
        comp,
        replayer,
        pipewright_engine::run::session::SessionConfig::default(),
        pipewright_engine::redact::Redactor::default(),
    );
    session
        .handle
        .send(pipewright_engine::run::session::Command::Run);
    let trace = loop {
        match tokio::time::timeout(Duration::from_secs(30), session.events.recv()).await {
            Ok(Some(pipewright_engine::run::events::Event::RunFinished { trace, .. })) => {
                break trace;
            }
            Ok(Some(_)) => {}
            other => panic!("the replayed run did not finish: {other:?}"),
        }
    };
    let replay = serde_json::to_value(trace.as_sent()).unwrap();
    for (id, rec) in &live.nodes {
        let r = &replay["nodes"][id];
        assert_eq!(r["replayed"], true, "{id} made a live call: {r}");
        assert_eq!(r["status"], rec.status.as_str(), "{id}");
        assert_eq!(&r["output"], rec.output.tree(), "{id}");
    }
}
