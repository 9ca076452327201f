//! The second review's workbench items (issue 48), each through the real
//! key path (`App::on_key`) and drawn with ratatui's `TestBackend`: what
//! the tmux stories (`tests/tui_e2e_review*.sh`) check on the binary, where
//! it is cheaper here.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use pipewright_engine::run::events::{Event, PauseReason};

use super::screens::{
    FAN, PIPE, app_on, key, ok_record, running_pipe, screen, type_text, with_two_saved_runs,
};
use crate::app::Mode;
use crate::overlay::Overlay;

/// The selected node's id.
fn selected(app: &crate::app::App) -> Option<String> {
    let i = app.dag.selected()?;
    Some(app.comp.as_ref()?.nodes[i].id.clone())
}

/// Item 17: `g` and `G` (Home and End) select the DAG's first and last
/// node as drawn.
#[test]
fn g_and_capital_g_go_to_the_first_and_the_last_node() {
    let (_d, mut app) = app_on(FAN);
    app.on_key(key(KeyCode::Char('G')));
    assert_eq!(selected(&app).as_deref(), Some("report"));
    app.on_key(key(KeyCode::Char('g')));
    assert_eq!(selected(&app).as_deref(), Some("search"));
    app.on_key(key(KeyCode::End));
    assert_eq!(selected(&app).as_deref(), Some("report"));
    app.on_key(key(KeyCode::Home));
    assert_eq!(selected(&app).as_deref(), Some("search"));
}

/// Item 17: in EDIT the terminal's cursor is shown on the editor's, and
/// hidden elsewhere.
#[test]
fn the_terminal_cursor_follows_the_editor_in_edit_mode() {
    let (_d, mut app) = app_on(PIPE);
    let mut term = Terminal::new(TestBackend::new(100, 30)).unwrap();
    term.draw(|f| app.draw(f)).unwrap();
    assert!(!term.backend().cursor_visible(), "hidden in the DAG");
    app.on_key(key(KeyCode::Char('i')));
    assert_eq!(app.mode(), Mode::Edit);
    term.draw(|f| app.draw(f)).unwrap();
    assert!(term.backend().cursor_visible(), "shown in EDIT");
    let at = app
        .editor
        .cursor_on_screen()
        .expect("the cursor's line shows");
    assert_eq!(term.backend().cursor_position(), at);
    app.on_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
    term.draw(|f| app.draw(f)).unwrap();
    assert!(!term.backend().cursor_visible(), "hidden again in the DAG");
}

/// Item 17: `1 node`, not `1 nodes`.
#[test]
fn one_node_is_one_node() {
    let (_d, mut app) = app_on("pipe:\n  - id: only\n    tool: echo\n    args: { message: hi }\n");
    let s = screen(&mut app, 120, 30);
    assert!(s.contains("DAG pipe · 1 node "), "{s}");
}

/// Item 6(b): the narrow DAG title counts running nodes with the spinner,
/// not with `●` (a breakpoint's glyph in the legend).
#[test]
fn the_narrow_dag_title_counts_running_nodes_with_the_spinner() {
    let (_d, mut app) = app_on(PIPE);
    running_pipe(&mut app);
    let s = screen(&mut app, 80, 24);
    let title = s.lines().next().unwrap_or_default();
    let spinner = crate::theme::SPINNER[0];
    assert!(title.contains(&format!("✓1 {spinner}1")), "{title}");
    assert!(!title.contains('●'), "{title}");
}

/// Item 6(c): at a breakpoint before a fan-out, its Iterations tab says
/// what it will iterate over, not that it is no fan-out.
#[test]
fn a_fan_out_not_yet_run_says_so_on_its_iterations_tab() {
    let (_d, mut app) = app_on(FAN);
    app.on_session(Event::RunStarted {
        composition: "enrich".into(),
        case: None,
        nodes: 4,
    });
    app.on_session(Event::Paused {
        reason: PauseReason::Breakpoint,
        before: Some("enrich".into()),
    });
    let i = app.comp.as_ref().and_then(|c| c.index_of("enrich"));
    app.select(i, true);
    app.on_key(key(KeyCode::Enter));
    app.on_key(key(KeyCode::Char('5')));
    let s = screen(&mut app, 120, 30);
    assert!(!s.contains("not a fan-out"), "{s}");
    assert!(
        s.contains("fan-out over ${search[*]}: no iteration has run yet"),
        "{s}"
    );
}

/// The footer row (the last) of a screen `w` wide.
fn footer(app: &mut crate::app::App, w: u16) -> String {
    let s = screen(app, w, 30);
    s.lines().last().unwrap_or_default().to_owned()
}

/// Item 5: the inspector's footer lists quit, and the run's keys while a
/// run goes (pause, cancel) or is paused (continue, step, skip).
#[test]
fn the_inspectors_footer_lists_quit_and_the_runs_keys() {
    let (_d, mut app) = app_on(PIPE);
    app.on_key(key(KeyCode::Enter));
    assert_eq!(app.mode(), Mode::Inspect);
    let f = footer(&mut app, 200);
    assert!(f.contains("q quit"), "{f}");
    assert!(!f.contains("pause"), "no run, no pause: {f}");
    running_pipe(&mut app);
    let f = footer(&mut app, 200);
    assert!(f.contains("p pause") && f.contains("x cancel"), "{f}");
    app.on_session(Event::Paused {
        reason: PauseReason::Breakpoint,
        before: Some("notify".into()),
    });
    // At 80 columns too: the run's keys come first.
    for w in [200, 80] {
        let f = footer(&mut app, w);
        for k in ["F8 continue", "F10 step", "s skip", "q quit"] {
            assert!(f.contains(k), "{w} columns, no {k}: {f}");
        }
    }
}

/// Item 5: a link question's footer has its own keys, not the form's.
#[test]
fn the_url_questions_footer_offers_open_and_copy() {
    use pipewright_engine::mcp::human::{Ask, Question};
    let (_d, mut app) = app_on(PIPE);
    let (tx, _rx) = tokio::sync::oneshot::channel();
    app.asks.push(
        Question {
            server: "demo".into(),
            node: Some("find".into()),
            candidates: Vec::new(),
            ask: Ask::Url {
                message: "Connect".into(),
                url: "https://example.org/connect".into(),
                elicitation_id: "e1".into(),
            },
        },
        tx,
    );
    assert_eq!(app.mode(), Mode::Ask);
    let f = footer(&mut app, 120);
    for k in ["Enter done", "o open", "y copy link", "Esc decline"] {
        assert!(f.contains(k), "no {k}: {f}");
    }
    assert!(!f.contains("next field"), "{f}");
}

/// The Messages log's texts.
fn logged(app: &crate::app::App) -> Vec<String> {
    app.messages.log().iter().map(|e| e.text.clone()).collect()
}

/// Item 13: chords that do nothing in the DAG say so, naming what they do
/// in the editor.
#[test]
fn chords_in_the_dag_say_what_they_do() {
    let (_d, mut app) = app_on(PIPE);
    let before = app.dag.selected();
    for c in ['z', 'a', 'g', 'k'] {
        app.on_key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL));
    }
    assert_eq!(app.dag.selected(), before, "Ctrl-G is not g");
    let log = logged(&app);
    let said = |name: &str| log.iter().any(|l| l.starts_with(name));
    assert!(said("Ctrl-Z undoes in the editor"), "{log:?}");
    assert!(said("Ctrl-A selects all in the editor"), "{log:?}");
    assert!(said("Ctrl-G goes to a line in the editor"), "{log:?}");
    assert!(said("Ctrl-K does nothing here"), "{log:?}");
}

/// Item 13: Esc in History's diff goes back to History, its selection
/// kept.
#[test]
fn esc_in_historys_diff_goes_back_to_history() {
    let (_d, mut app) = with_two_saved_runs();
    app.act(crate::keys::Action::History);
    app.on_key(key(KeyCode::Down));
    app.on_key(key(KeyCode::Char('D')));
    assert!(matches!(app.overlay, Some(Overlay::Text(_))));
    app.on_key(key(KeyCode::Esc));
    let Some(Overlay::History(h)) = &app.overlay else {
        panic!("not back in History: {:?}", app.mode());
    };
    assert_eq!(h.selected_id(), Some("20261122-120100-aaaa"));
}

/// Item 13: in a saved run open read-only, `b`, `r`, `s` and `P` change
/// nothing of the live plan and say why.
#[test]
fn run_keys_in_a_read_only_run_are_refused_in_a_sentence() {
    let (_d, mut app) = with_two_saved_runs();
    app.act(crate::keys::Action::History);
    app.on_key(key(KeyCode::Enter));
    assert!(app.viewing.is_some());
    for c in ['b', 'r', 's', 'P'] {
        let effects = app.on_key(key(KeyCode::Char(c)));
        assert!(effects.is_empty(), "{c}: {effects:?}");
        let status = app
            .messages
            .status()
            .map(|m| m.text.clone())
            .unwrap_or_default();
        assert!(status.contains("read-only"), "{c}: {status}");
    }
    app.on_key(key(KeyCode::Esc));
    assert!(app.viewing.is_none());
    assert!(app.breakpoints.is_empty(), "{:?}", app.breakpoints);
    assert!(app.visuals.iter().all(|v| !v.breakpoint));
}

/// Item 13: at 80x24 a sampling question whose message wraps keeps the
/// reply box in view, and Ctrl-G with no provider says so where it can be
/// read (the modal and the status line).
#[test]
fn the_sampling_modal_keeps_the_reply_and_its_error_in_view_at_80x24() {
    use pipewright_engine::mcp::human::{Ask, Question};
    let (_d, mut app) = app_on(PIPE);
    let long = "Write a short, friendly reply to the customer who asked about the \
                order they placed last week, which has not arrived yet; say when it \
                ships, apologise for the wait, offer a discount on the next order, \
                and sign it with the team's name. Keep it under five sentences, \
                and do not promise a date you cannot keep. "
        .repeat(2);
    let request = serde_json::json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": long}}],
        "systemPrompt": "You are a helpful support agent.",
        "maxTokens": 200
    });
    let (tx, _rx) = tokio::sync::oneshot::channel();
    app.asks.push(
        Question {
            server: "demo".into(),
            node: Some("find".into()),
            candidates: Vec::new(),
            ask: Ask::Sample { request },
        },
        tx,
    );
    let s = screen(&mut app, 80, 24);
    assert!(s.contains("your reply"), "the reply box is cut off:\n{s}");
    app.on_key(KeyEvent::new(KeyCode::Char('g'), KeyModifiers::CONTROL));
    let s = screen(&mut app, 80, 24);
    let above_footer: Vec<&str> = s.lines().take(23).collect();
    assert!(
        above_footer
            .iter()
            .any(|l| l.contains("no sampling provider")),
        "{s}"
    );
    assert!(
        logged(&app)
            .iter()
            .any(|l| l.contains("no sampling provider")),
        "{:?}",
        logged(&app)
    );
}

/// Opens the Raw tab of the selected node and waits for its text.
fn raw_tab(app: &mut crate::app::App) {
    app.on_key(key(KeyCode::Enter));
    app.on_key(key(KeyCode::Char('6')));
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !screen(app, 140, 30).contains(" line 1/") && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(10));
        app.on_tick(std::time::Instant::now());
    }
}

/// The rows of a screen that show `what` in the text, not in a border's
/// search line.
fn rows_with(s: &str, what: &str) -> Vec<String> {
    s.lines()
        .filter(|l| l.contains(what) && !l.contains("match "))
        .map(str::to_owned)
        .collect()
}

/// Item 15: a search in Raw brings its match into view past the right
/// edge of a cut line (scrolled sideways, `◀` saying so) and deep inside a
/// wrapped one (the row it is on).
#[test]
fn raw_search_brings_the_match_into_view_cut_or_wrapped() {
    let (_d, mut app) = app_on(PIPE);
    running_pipe(&mut app);
    let long = format!("{} NEEDLE", "x".repeat(300));
    let deep = format!("{}rec-000015 end", "y ".repeat(1500));
    let mut rec = ok_record(
        serde_json::json!({"query": long}),
        serde_json::json!({"text": deep}),
    );
    rec.raw = serde_json::json!({"structuredContent": {"note": long, "text": deep}}).into();
    super::screens::finish(&mut app, "find", rec);
    raw_tab(&mut app);
    // Cut: the needle sits 300 columns in.
    let s = screen(&mut app, 140, 30);
    assert!(rows_with(&s, "NEEDLE").is_empty(), "in view already:\n{s}");
    assert!(s.contains('▶'), "a cut line says it goes on:\n{s}");
    app.on_key(key(KeyCode::Char('/')));
    type_text(&mut app, "NEEDLE");
    app.on_key(key(KeyCode::Enter));
    let s = screen(&mut app, 140, 30);
    let rows = rows_with(&s, "NEEDLE");
    assert_eq!(rows.len(), 1, "{s}");
    assert!(rows[0].contains('◀'), "scrolled sideways: {}", rows[0]);
    app.on_key(key(KeyCode::Esc));
    let s = screen(&mut app, 140, 30);
    assert!(s.contains("from column"), "the border says where: {s}");
    // `0` goes back to the lines' start.
    app.on_key(key(KeyCode::Char('0')));
    assert!(!screen(&mut app, 140, 30).contains('◀'));
    // Wrapped: the match is on a row 40 or so rows into its line.
    app.on_key(key(KeyCode::Char('w')));
    let s = screen(&mut app, 140, 30);
    assert!(
        rows_with(&s, "rec-000015").is_empty(),
        "in view already:\n{s}"
    );
    app.on_key(key(KeyCode::Char('/')));
    type_text(&mut app, "rec-000015");
    app.on_key(key(KeyCode::Enter));
    let s = screen(&mut app, 140, 30);
    assert!(s.contains("match 1/"), "{s}");
    assert_eq!(rows_with(&s, "rec-000015").len(), 1, "{s}");
    // Down scrolls a wrapped line a row at a time: the match moves up a
    // row.
    app.on_key(key(KeyCode::Esc));
    let row_of = |s: &str| s.lines().position(|l| l.contains("rec-000015"));
    let before = row_of(&screen(&mut app, 140, 30)).expect("in view");
    app.on_key(key(KeyCode::Down));
    let after = row_of(&screen(&mut app, 140, 30)).expect("in view");
    assert_eq!(after + 1, before);
}

/// Item 9: with no theme chosen, a light terminal gets the light theme; a
/// terminal that does not say gets the dark one and the hint, on the
/// status line once per data directory and in Messages every time.
#[test]
fn the_default_theme_fits_the_terminal_or_says_how_to_choose() {
    let (_d, mut app) = app_on(PIPE);
    assert!(!app.theme_by_default(), "only when nothing chose it");
    app.theme_default = true;
    assert!(app.theme_by_default());
    app.fit_theme(Some(true));
    assert_eq!(app.theme.name, "light");
    let (_d, mut app) = app_on(PIPE);
    app.theme_default = true;
    app.fit_theme(None);
    assert_eq!(app.theme.name, "dark");
    let status = app
        .messages
        .status()
        .map(|m| m.text.clone())
        .unwrap_or_default();
    assert!(status.contains("--theme light"), "{status}");
    // Once: the next start in the same data directory says it in
    // Messages only.
    app.messages.clear_status();
    app.fit_theme(None);
    assert!(app.messages.status().is_none());
    assert_eq!(
        logged(&app)
            .iter()
            .filter(|l| l.contains("--theme light"))
            .count(),
        2
    );
}

/// Item 4: at 80x24 a message too long for the status bar is read whole
/// on a row of its own above it, the footer keeping its keys; it goes with
/// the next key.
#[test]
fn at_80x24_a_message_reads_whole_and_the_footer_keeps_its_keys() {
    let (_d, mut app) = app_on(PIPE);
    app.on_key(key(KeyCode::Char('u')));
    let s = screen(&mut app, 80, 24);
    assert!(
        s.contains("`u` does nothing here: ? lists the keys, : finds a command"),
        "{s}"
    );
    let rows: Vec<&str> = s.lines().collect();
    assert!(rows[23].contains("q quit"), "the footer: {}", rows[23]);
    assert!(rows[22].starts_with(" DAG "), "the bar: {}", rows[22]);
    // Longer than a row: two rows, the rest in Messages.
    let long = "word ".repeat(40);
    app.say(long.trim(), false);
    let s = screen(&mut app, 80, 24);
    let rows: Vec<&str> = s.lines().collect();
    assert!(rows[20].trim_start().starts_with("word"), "{s}");
    assert!(rows[21].contains("(m: all of it)"), "{s}");
    app.on_key(key(KeyCode::Down));
    let s = screen(&mut app, 80, 24);
    assert!(!s.contains("word word"), "the next key takes it away:\n{s}");
}

/// Item 4: History's `E` asks in a popup that lists all four formats at
/// 80x24; an answer goes back to History.
#[test]
fn historys_export_choice_lists_every_format_at_80x24() {
    let (d, mut app) = with_two_saved_runs();
    app.act(crate::keys::Action::History);
    // The export is written next to the pipeline file: the test's.
    app.opts.file = d.path().join("pipeline.yml");
    app.on_key(key(KeyCode::Char('E')));
    assert!(matches!(app.overlay, Some(Overlay::Choice(_))));
    let s = screen(&mut app, 80, 24);
    for format in [
        "j  JSON trace",
        "u  JUnit XML",
        "o  OTLP/JSON",
        "c  cassette",
    ] {
        assert!(s.contains(format), "{format}:\n{s}");
    }
    // A key that is no answer leaves it open.
    app.on_key(key(KeyCode::Char('x')));
    assert!(matches!(app.overlay, Some(Overlay::Choice(_))));
    app.on_key(key(KeyCode::Char('j')));
    assert!(
        matches!(app.overlay, Some(Overlay::History(_))),
        "back in History"
    );
    let status = app
        .messages
        .status()
        .map(|m| m.text.clone())
        .unwrap_or_default();
    assert!(status.starts_with("exported run"), "{status}");
    assert!(d.path().join("pipeline.20261122-120200-bbbb.json").exists());
}

/// An app on `file` (already written) with `data` as its data directory,
/// after its first validation.
fn app_at(file: &std::path::Path, data: &std::path::Path) -> crate::app::App {
    use crate::app::{App, Options};
    use crate::config::{Config, Dirs};
    let editor = crate::editor::Editor::open(file, Some(data)).unwrap();
    let config = Config {
        theme: crate::theme::Theme::dark(),
        keymap: crate::keys::Keymap::default(),
    };
    let opts = Options {
        file: file.to_path_buf(),
        ..Options::default()
    };
    let dirs = Dirs::new(None, Some(data.to_path_buf()));
    let mut app = App::new(opts, dirs, config, editor);
    let mut now = std::time::Instant::now();
    for _ in 0..50 {
        now += std::time::Duration::from_millis(400);
        app.on_tick(now);
        if app.comp.is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    app
}

/// Item 3: a second workbench on the same file is not offered the first
/// one's live buffer, says so and takes typed keys as text; once the first
/// has died, its copy is offered in a dialog with its own mode and footer.
#[test]
fn recovery_is_offered_only_for_a_workbench_that_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pipeline.yml");
    std::fs::write(&file, PIPE).unwrap();
    let data = dir.path().join("data");
    let mut first = app_at(&file, &data);
    first.on_key(key(KeyCode::Char('i')));
    for c in "#live ".chars() {
        first.on_key(key(KeyCode::Char(c)));
    }
    first.on_tick(std::time::Instant::now() + std::time::Duration::from_secs(3));
    // The second, while the first runs.
    let mut second = app_at(&file, &data);
    assert!(second.overlay.is_none(), "nothing offered");
    assert_eq!(second.mode(), Mode::Dag);
    let said = second
        .messages
        .status()
        .map(|m| m.text.clone())
        .unwrap_or_default();
    assert!(said.contains("another workbench"), "{said}");
    second.on_key(key(KeyCode::Char('i')));
    for c in "#zz".chars() {
        second.on_key(key(KeyCode::Char(c)));
    }
    assert!(
        second.editor.text().starts_with("#zz"),
        "typed keys are text"
    );
    // The second quits cleanly; the first dies without saving.
    second.editor.discard_recovery();
    drop(second);
    drop(first);
    let mut third = app_at(&file, &data);
    assert_eq!(third.mode(), Mode::Recover);
    let s = screen(&mut third, 80, 24);
    let rows: Vec<&str> = s.lines().collect();
    assert!(rows[22].starts_with(" RECOVER "), "{}", rows[22]);
    assert!(rows[23].contains("r recover  d discard"), "{}", rows[23]);
    assert!(!s.contains("#zz"), "the second's text is not the first's");
    third.on_key(key(KeyCode::Char('r')));
    assert!(
        third.editor.text().starts_with("#live "),
        "{}",
        third.editor.text()
    );
    assert_eq!(third.mode(), Mode::Dag);
}
