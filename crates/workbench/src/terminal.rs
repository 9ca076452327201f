//! The event loop: terminal input, session events, server connections and a
//! tick, all in one `tokio::select!`. The app reacts; this loop carries out
//! its effects (connecting, sending commands, `$EDITOR`) and redraws at most
//! once per pass, after every waiting event has been taken in. The terminal
//! is restored on every way out: return, error, panic, SIGTERM, SIGHUP and
//! SIGINT (another process's: Ctrl-C is a key here).

use std::io::{self, Stdout};
use std::time::{Duration, Instant};

use crossterm::event::{
    DisableBracketedPaste, DisableMouseCapture, EnableBracketedPaste, EnableMouseCapture,
    Event as TermEvent, EventStream,
};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use futures::StreamExt;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;

use super::app::{App, Effect};
use super::driver::Driver;

mod background;

type Term = Terminal<CrosstermBackend<Stdout>>;

/// How often the spinner turns and the editor checks its debounce timers.
const TICK: Duration = Duration::from_millis(100);

fn enter() -> io::Result<Term> {
    enable_raw_mode()?;
    let mut out = io::stdout();
    execute!(
        out,
        EnterAlternateScreen,
        EnableMouseCapture,
        EnableBracketedPaste
    )?;
    Terminal::new(CrosstermBackend::new(out))
}

/// Puts the terminal back as the shell had it. Safe to call twice.
pub fn restore() {
    let _ = disable_raw_mode();
    let _ = execute!(
        io::stdout(),
        DisableBracketedPaste,
        DisableMouseCapture,
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
}

/// Restores the terminal when dropped, so `?` and early returns are safe.
struct Guard;

impl Drop for Guard {
    fn drop(&mut self) {
        restore();
    }
}

/// Set by a panic anywhere in the process once the terminal is restored.
static PANICKED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A panic on the workbench's thread restores the terminal before the
/// message is printed, so the message is readable and the shell is usable;
/// when the runtime catches it (a task's), the loop sees [`PANICKED`] and
/// quits rather than draw over the message on a terminal no longer raw. A
/// panic on another thread (the editor's checks catch theirs) is written
/// to the log, not over the screen, and the workbench goes on.
fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let thread = std::thread::current();
        if thread.name() == Some("main") {
            PANICKED.store(true, std::sync::atomic::Ordering::SeqCst);
            restore();
            previous(info);
        } else {
            tracing::error!("thread {} panicked: {info}", thread.name().unwrap_or("?"));
        }
    }));
}

/// Runs the workbench until the user quits; returns the exit code: 0, or
/// 128 plus the number of the signal that ended it.
pub async fn run(mut app: App) -> io::Result<u8> {
    install_panic_hook();
    // Listening before the terminal changes: a signal from here on ends
    // the loop, and the terminal is restored, instead of killing the
    // process with the terminal raw.
    let mut signals = Signals::listen();
    // Made before entering, so a half-done `enter` is undone too.
    let guard = Guard;
    let mut term = enter()?;
    // In raw mode, before anything reads the keys: with no theme chosen,
    // the default fits the terminal's background.
    if app.theme_by_default() {
        let bg = background::query();
        app.fit_theme(bg.map(background::is_light));
    }
    let mut input = EventStream::new();
    let mut ticker = tokio::time::interval(TICK);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut driver = Driver::new();
    let mut code = 0;

    let mut pending = app.opening();
    pending.extend(app.on_tick(Instant::now()));
    term.draw(|f| app.draw(f))?;
    loop {
        // Carry out what the last reactions asked for; the driver leaves
        // what needs the terminal.
        let effects = std::mem::take(&mut pending);
        for eff in driver.apply(&mut app, effects) {
            match eff {
                Effect::ExternalEditor => {
                    drop(input);
                    let res = external_editor(&mut app, &mut term);
                    input = EventStream::new();
                    if let Err(e) = res {
                        app.say(e, true);
                    }
                    term.clear()?;
                }
                Effect::OpenUrl(url) => open_url(&mut app, &url),
                Effect::Copy(text) => {
                    use std::io::Write;
                    let mut out = io::stdout();
                    let _ = out.write_all(super::copy::osc52(&text).as_bytes());
                    let _ = out.flush();
                }
                _ => {}
            }
        }
        if app.quit {
            break;
        }

        // Wait for the next thing to happen, then take in whatever else is
        // already waiting before drawing once.
        tokio::select! {
            ev = input.next() => match ev {
                Some(Ok(ev)) => pending.extend(on_terminal(&mut app, ev)),
                Some(Err(e)) => { app.say(format!("terminal: {e}"), true); }
                None => break,
            },
            incoming = driver.next() => pending.extend(driver.take(&mut app, incoming)),
            _ = ticker.tick() => pending.extend(app.on_tick(Instant::now())),
            signal = signals.recv() => {
                app.editor_flush_recovery();
                code = signal;
                break;
            }
        }
        if PANICKED.load(std::sync::atomic::Ordering::SeqCst) {
            // 101, as a panic that ends a Rust program.
            code = 101;
            break;
        }
        pending.extend(driver.drain(&mut app, 4096));
        term.draw(|f| app.draw(f))?;
    }
    // A run under way is cancelled and its trace saved; no server is left
    // waiting on a question nobody will see. A signal meanwhile (a second
    // one) stops the wait.
    tokio::select! {
        () = driver.shutdown(&mut app, QUIT_GRACE) => {}
        signal = signals.recv() => code = signal,
    }
    drop(guard);
    Ok(code)
}

/// How long quitting waits for a cancelled run to end and be saved.
const QUIT_GRACE: Duration = Duration::from_secs(5);

/// The signals that end the workbench, each with the exit code it gives
/// (128 plus its number); one that cannot be set up never fires.
struct Signals(Vec<(tokio::signal::unix::Signal, u8)>);

impl Signals {
    fn listen() -> Signals {
        use tokio::signal::unix::{SignalKind, signal};
        Signals(
            [
                (SignalKind::terminate(), 143),
                (SignalKind::hangup(), 129),
                (SignalKind::interrupt(), 130),
            ]
            .into_iter()
            .filter_map(|(kind, code)| Some((signal(kind).ok()?, code)))
            .collect(),
        )
    }

    /// The exit code of the next signal that comes.
    async fn recv(&mut self) -> u8 {
        let waits = self.0.iter_mut().map(|(s, code)| {
            let code = *code;
            Box::pin(async move {
                match s.recv().await {
                    Some(()) => code,
                    None => std::future::pending().await,
                }
            })
        });
        let waits: Vec<_> = waits.collect();
        if waits.is_empty() {
            return std::future::pending().await;
        }
        futures::future::select_all(waits).await.0
    }
}

/// Asks the desktop to open `url` (`xdg-open`, `open` on macOS); only ever
/// on the person's key.
fn open_url(app: &mut App, url: &str) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let started = tokio::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    match started {
        Ok(mut child) => {
            tokio::spawn(async move {
                let _ = child.wait().await;
            });
            app.say(format!("asked {opener} to open {url}"), false);
            app.asks.url_opened(Ok(opener.to_owned()));
        }
        Err(e) => {
            app.say(
                format!("cannot open the link ({opener}: {e}); open it by hand"),
                true,
            );
            app.asks.url_opened(Err(format!("{opener}: {e}")));
        }
    }
}

fn on_terminal(app: &mut App, ev: TermEvent) -> Vec<Effect> {
    match ev {
        TermEvent::Key(k) if k.kind != crossterm::event::KeyEventKind::Release => app.on_key(k),
        TermEvent::Mouse(m) => app.on_mouse(m),
        TermEvent::Paste(text) => {
            app.on_paste(&text);
            Vec::new()
        }
        _ => Vec::new(),
    }
}

/// Hands the buffer (with unsaved edits) to `$VISUAL` / `$EDITOR` in a
/// temporary file, and takes the result back as an edit that can be undone.
fn external_editor(app: &mut App, term: &mut Term) -> Result<(), String> {
    let program = std::env::var("VISUAL")
        .or_else(|_| std::env::var("EDITOR"))
        .unwrap_or_else(|_| "vi".into());
    let words = pipewright_engine::mcp::servers::split_command(&program)
        .map_err(|e| format!("$EDITOR: {e}"))?;
    let Some((cmd, args)) = words.split_first() else {
        return Err("$EDITOR is empty".into());
    };
    let ext = app
        .editor
        .path()
        .extension()
        .map(|e| e.to_string_lossy().into_owned())
        .unwrap_or_else(|| "yml".into());
    let tmp = tempfile_path(&ext);
    std::fs::write(&tmp, app.editor.text())
        .map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    restore();
    let status = std::process::Command::new(cmd)
        .args(args)
        .arg(&tmp)
        .status();
    let back = enable_raw_mode().and_then(|()| {
        execute!(
            io::stdout(),
            EnterAlternateScreen,
            EnableMouseCapture,
            EnableBracketedPaste
        )
    });
    let _ = term.clear();
    back.map_err(|e| format!("cannot take the terminal back: {e}"))?;
    let text = std::fs::read_to_string(&tmp);
    let _ = std::fs::remove_file(&tmp);
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => return Err(format!("{program} exited with {s}; buffer unchanged")),
        Err(e) => return Err(format!("cannot start {program}: {e}")),
    }
    let text = text.map_err(|e| format!("cannot read the edited text back: {e}"))?;
    if text != app.editor.text() {
        app.editor.set_text(&text);
        app.say(format!("took the buffer back from {program}"), false);
    }
    Ok(())
}

fn tempfile_path(ext: &str) -> std::path::PathBuf {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    std::env::temp_dir().join(format!("pipewright-{}-{stamp}.{ext}", std::process::id()))
}
