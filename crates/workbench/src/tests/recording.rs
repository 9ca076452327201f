//! The recording view driven as a person drives it: the workbench opened
//! with `--record` (and from the palette) on a session file a test writes
//! call by call as `pipewright record` does, through the same `Driver`
//! the terminal loop uses; nodes appear, the edges follow, the inspector
//! shows an exchange, `W` writes the pipeline, Esc gives the file back.

use std::path::Path;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

use crate::app::{App, Effect, Options};
use crate::config::{Config, Dirs};
use crate::driver::Driver;
use crate::editor::Editor;
use crate::keys::Keymap;
use crate::recording::tests::Tape;
use crate::state::Focus;
use crate::theme::Theme;

const FILE: &str = "\
pipe:
  - id: mine
    tool: echo
    args: { message: mine }
";

struct Bench {
    app: App,
    driver: Driver,
    dir: tempfile::TempDir,
}

impl Bench {
    /// A workbench on a file of its own, opened as `edit --record
    /// RECORD` would open it (`record` relative to the test's folder).
    async fn open(record: Option<&str>) -> Bench {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("flow.yml");
        std::fs::write(&file, FILE).unwrap();
        let data = dir.path().join("data");
        let editor = Editor::open(&file, Some(&data)).unwrap();
        let config = Config {
            theme: Theme::dark(),
            keymap: Keymap::default(),
        };
        let opts = Options {
            file,
            record: record.map(|r| dir.path().join(r)),
            ..Options::default()
        };
        let dirs = Dirs {
            config: Some(dir.path().join("config")),
            data: Some(data),
        };
        let mut app = App::new(opts, dirs, config, editor);
        let first = app.opening();
        let mut b = Bench {
            app,
            driver: Driver::new(),
            dir,
        };
        b.apply(first);
        b
    }

    fn path(&self, name: &str) -> std::path::PathBuf {
        self.dir.path().join(name)
    }

    fn apply(&mut self, effects: Vec<Effect>) {
        let rest = self.driver.apply(&mut self.app, effects);
        assert!(rest.is_empty(), "unexpected terminal effects: {rest:?}");
    }

    async fn pump(&mut self) {
        let effects = tokio::select! {
            incoming = self.driver.next() => self.driver.take(&mut self.app, incoming),
            () = tokio::time::sleep(Duration::from_millis(40)) => self.app.on_tick(Instant::now()),
        };
        self.apply(effects);
    }

    async fn until(&mut self, what: &str, cond: impl Fn(&App) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !cond(&self.app) {
            assert!(
                Instant::now() < deadline,
                "timed out waiting until {what}; the screen:\n{}",
                self.screen(140, 34)
            );
            self.pump().await;
        }
    }

    fn key(&mut self, code: KeyCode) {
        let effects = self.app.on_key(KeyEvent::new(code, KeyModifiers::NONE));
        self.apply(effects);
    }

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
}

fn ids(a: &App) -> Vec<String> {
    a.comp
        .as_ref()
        .map(|c| c.nodes.iter().map(|n| n.id.clone()).collect())
        .unwrap_or_default()
}

fn parents(a: &App) -> Vec<Vec<usize>> {
    a.comp
        .as_ref()
        .map(|c| c.parents.clone())
        .unwrap_or_default()
}

fn demo_session(path: &Path) -> Tape {
    Tape::create(path)
}

#[tokio::test]
async fn edit_record_draws_each_call_as_it_lands_and_w_writes_the_pipeline() {
    let mut b = Bench::open(Some("recordings")).await;
    assert!(b.app.recording.is_some());
    let s = b.screen(140, 34);
    assert!(s.contains("no call recorded yet"), "{s}");
    assert!(s.contains("REC LIVE 0 calls"), "{s}");

    std::fs::create_dir(b.path("recordings")).unwrap();
    let mut tape = demo_session(&b.path("recordings/20261129-020000-demo-1.jsonl"));
    tape.call(
        "search_users",
        json!({"query": "ali"}),
        json!({"users": [{"id": "u1", "name": "Alice"}, {"id": "u5", "name": "Alicia"}]}),
    );
    b.until("the first call is a node", |a| ids(a) == ["search_users"])
        .await;
    tape.call(
        "get_user_details",
        json!({"user_id": "u1"}),
        json!({"id": "u1", "email": "alice@example.com"}),
    );
    b.until("the second call is a node with its edge", |a| {
        ids(a) == ["search_users", "get_user_details"] && parents(a) == [vec![], vec![0]]
    })
    .await;
    // The newest node is selected as it comes; the inspector shows its
    // exchange.
    assert_eq!(b.app.dag.selected(), Some(1));
    let s = b.screen(140, 34);
    assert!(
        s.contains("REC LIVE 2 calls · 1 ref · 1 input · 0 flags"),
        "{s}"
    );
    assert!(s.contains("recording 20261129-020000-demo-1.jsonl"), "{s}");
    assert!(s.contains("${search_users.users[0].id}"), "{s}");
    assert!(s.contains("alice@example.com"), "{s}");
    assert!(s.contains("W write the pipeline"), "{s}");

    // A run key does nothing to a recording.
    b.key(KeyCode::F(5));
    assert!(!b.app.session.is_open());

    tape.end();
    b.until("the end is said", |a| {
        a.recording.as_ref().is_some_and(|r| r.ended.is_some())
    })
    .await;
    assert!(b.screen(140, 34).contains("REC ENDED 2 calls"));

    b.key(KeyCode::Char('W'));
    b.until("the pipeline is written", |a| {
        a.messages
            .last_logged()
            .is_some_and(|m| m.starts_with("wrote ") || m.starts_with("no pipeline"))
    })
    .await;
    let said = b.app.messages.last_logged().unwrap_or_default().to_owned();
    assert!(said.starts_with("wrote "), "{said}");
    let written = b.path("demo.yml");
    let text = std::fs::read_to_string(&written).unwrap();
    assert!(text.contains("${search_users.users[0].id}"), "{text}");
    assert!(b.path("demo.yml.cassette.json").exists());

    // Esc leaves: the file open before is back, nothing followed.
    b.app.focus = Focus::Dag;
    b.key(KeyCode::Esc);
    assert!(b.app.recording.is_none());
    assert!(b.app.viewing.is_none());
    b.until("the file's own plan is back", |a| ids(a) == ["mine"])
        .await;
}

#[tokio::test]
async fn the_palette_follows_a_recording_folder() {
    let mut b = Bench::open(None).await;
    b.until("the file validates", |a| a.comp.is_some()).await;
    std::fs::create_dir(b.path("recordings")).unwrap();
    let items = b.app.palette_items();
    assert!(
        items
            .iter()
            .any(|i| i.text().starts_with("follow a recording… — ")),
        "{items:?}"
    );
    // The folder beside the file is offered (it exists).
    let dir = b.path("recordings");
    assert!(
        items
            .iter()
            .any(|i| matches!(i, crate::palette::PaletteItem::Follow(d) if *d == dir)),
        "{items:?}"
    );
    let mut tape = demo_session(&dir.join("20261129-020000-demo-1.jsonl"));
    tape.call("echo", json!({"message": "hi"}), json!({"echoed": "hi"}));
    let effects = b.app.update(crate::msg::Msg::FollowRecording(dir));
    b.apply(effects);
    b.until("the call is a node", |a| ids(a) == ["echo"]).await;
    // W with no recording on screen says how to get one.
    b.key(KeyCode::Esc);
    b.key(KeyCode::Char('W'));
    let said = b.app.messages.last_logged().unwrap_or_default().to_owned();
    assert!(said.contains("follow one first"), "{said}");
}
