//! The event loop: terminal input, session events, server connections and a
//! tick, all in one `tokio::select!`. The app reacts; this loop carries out
//! its effects (connecting, sending commands, `$EDITOR`) and redraws at most
//! once per pass, after every waiting event has been taken in. The terminal
//! is restored on every way out: return, error, panic, SIGTERM and SIGHUP.

use std::io::{self, Stdout};
use std::sync::Arc;
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
use tokio::sync::mpsc;

use crate::engine::mcp::ConnectOptions;
use crate::engine::mcp::servers::{self, ServerPool};
use crate::engine::redact::Redactor;
use crate::engine::run::events::Event;
use crate::engine::run::session::{self, Command, Session};

use crate::engine::plan::preflight::{self, Preflight, ToolLists};

use super::app::{App, Effect, Preflighted};
use super::ask::responder::{self, Asker};
use super::message::Message;

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

/// A panic restores the terminal before the message is printed, so the
/// message is readable and the shell is usable.
fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        previous(info);
    }));
}

/// A started session and the pool it calls through.
struct Live {
    session: Session,
    pool: Arc<ServerPool>,
}

type Started = Result<(Live, Preflight), String>;

/// Runs the workbench until the user quits; returns the exit code.
pub async fn run(mut app: App) -> io::Result<u8> {
    install_panic_hook();
    let mut term = enter()?;
    let guard = Guard;
    let mut input = EventStream::new();
    let mut ticker = tokio::time::interval(TICK);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let (start_tx, mut start_rx) = mpsc::unbounded_channel::<(u64, Started, Vec<Command>)>();
    let mut live: Option<Live> = None;
    // A session waiting for the user to allow its destructive calls.
    let mut held: Option<(Live, Vec<Command>)> = None;
    // Commands given while the session is still connecting.
    let mut queued: Vec<Command> = Vec::new();
    let mut generation: u64 = 0;
    // Background tasks (a server's question, the provider's reply) send
    // here; only the loop hands them to the app.
    let (msg_tx, mut msg_rx) = mpsc::unbounded_channel::<Message>();
    let mut term_sig = signal(tokio::signal::unix::SignalKind::terminate());
    let mut hup_sig = signal(tokio::signal::unix::SignalKind::hangup());

    let effects = app.on_tick(Instant::now());
    let mut pending = effects;
    term.draw(|f| super::view::draw(&mut app, f))?;
    loop {
        // Carry out what the last reactions asked for.
        for eff in pending.drain(..) {
            match eff {
                Effect::Start {
                    pipeline,
                    comp,
                    cfg,
                    breakpoints,
                    then,
                } => {
                    if let Some(old) = live.take() {
                        close(old);
                    }
                    app.cancel_questions("the session was replaced");
                    generation += 1;
                    let tx = start_tx.clone();
                    let mut cfg = cfg;
                    // The person at the workbench answers the servers.
                    cfg.human = Asker::new(msg_tx.clone(), generation).human();
                    let opts = app.opts.clone();
                    let g = generation;
                    let mut then_all: Vec<Command> = breakpoints
                        .into_iter()
                        .map(Command::ToggleBreakpoint)
                        .collect();
                    then_all.extend(then);
                    tokio::spawn(async move {
                        let redactor = Redactor::default();
                        let mut vars = pipeline.vars.clone();
                        vars.extend(cfg.vars.clone());
                        let started = async {
                            let specs = servers::resolve(
                                &pipeline,
                                &opts.servers,
                                opts.url.as_deref(),
                                &vars,
                                &redactor,
                            )?;
                            let needed = servers::needed(&comp, &specs);
                            let pool =
                                ServerPool::connect(&specs, &needed, &ConnectOptions::default())
                                    .await
                                    .map_err(|e| redactor.text(&e.to_string()))?;
                            // Preflight on the tool lists just fetched: a
                            // bad node or a destructive call is known before
                            // anything is called.
                            let tools: ToolLists = pool
                                .connections()
                                .map(|c| (c.name().to_owned(), c.tools().to_vec()))
                                .collect();
                            let default = (specs.len() == 1)
                                .then(|| specs.keys().next().cloned())
                                .flatten();
                            let report = preflight::check(
                                &[(&*comp, cfg.vars.clone())],
                                &tools,
                                default.as_deref(),
                            );
                            let pool = Arc::new(pool);
                            let session =
                                session::start(comp, pool.clone(), *cfg, redactor.clone());
                            Ok::<(Live, Preflight), String>((Live { session, pool }, report))
                        }
                        .await;
                        let _ = tx.send((g, started, then_all));
                    });
                }
                Effect::Send(cmd) => match &live {
                    Some(l) => {
                        l.session.handle.send(cmd);
                    }
                    None => queued.push(cmd),
                },
                Effect::Proceed => {
                    if let Some((l, then)) = held.take() {
                        for c in then.into_iter().chain(queued.drain(..)) {
                            l.session.handle.send(c);
                        }
                        live = Some(l);
                    }
                }
                Effect::DropSession => {
                    app.cancel_questions("the session was dropped");
                    generation += 1;
                    queued.clear();
                    if let Some((old, _)) = held.take() {
                        close(old);
                    }
                    if let Some(old) = live.take() {
                        close(old);
                    }
                }
                Effect::ExternalEditor => {
                    drop(input);
                    let res = external_editor(&mut app, &mut term);
                    input = EventStream::new();
                    if let Err(e) = res {
                        app.say(e, true);
                    }
                    term.clear()?;
                }
                Effect::SaveTrace(trace) => crate::engine::run::store::save(&trace),
                Effect::AskProvider {
                    ticket,
                    provider,
                    request,
                } => {
                    let tx = msg_tx.clone();
                    tokio::spawn(async move {
                        let result = provider.complete(&request).await;
                        let _ = tx.send(Message::Sampled { ticket, result });
                    });
                }
                Effect::OpenUrl(url) => open_url(&mut app, &url),
                Effect::Quit => app.quit = true,
            }
        }
        if app.quit {
            break;
        }

        // Wait for the next thing to happen, then take in whatever else is
        // already waiting before drawing once.
        let session_rx = live.as_mut().map(|l| &mut l.session.events);
        tokio::select! {
            ev = input.next() => match ev {
                Some(Ok(ev)) => pending.extend(on_terminal(&mut app, ev)),
                Some(Err(e)) => { app.say(format!("terminal: {e}"), true); }
                None => break,
            },
            ev = recv(session_rx) => match ev {
                Some(ev) => pending.extend(app.on_session(ev)),
                None => {
                    // The session ended (it cannot while we hold its handle;
                    // this is a crash of the actor): start afresh next run.
                    live = None;
                    app.on_start_failed("the session ended unexpectedly; F5 starts a new one");
                }
            },
            started = start_rx.recv() => {
                if let Some((g, started, then)) = started {
                    if g != generation {
                        if let Ok((l, _)) = started { close(l); }
                        continue;
                    }
                    match started {
                        Ok((l, report)) => match app.on_preflight(&report) {
                            Preflighted::Go => {
                                for c in then.into_iter().chain(queued.drain(..)) {
                                    l.session.handle.send(c);
                                }
                                live = Some(l);
                            }
                            Preflighted::Ask => held = Some((l, then)),
                            Preflighted::Stop => {
                                queued.clear();
                                close(l);
                            }
                        },
                        Err(e) => { queued.clear(); app.on_start_failed(&e); }
                    }
                }
            },
            msg = msg_rx.recv() => match msg {
                // A question of a session dropped since: nobody shows it.
                Some(Message::Question { reply, generation: g, .. }) if g != generation => {
                    let _ = reply.send(responder::cancelled("the session was dropped"));
                }
                Some(m) => pending.extend(app.on_message(m)),
                None => {}
            },
            _ = ticker.tick() => pending.extend(app.on_tick(Instant::now())),
            _ = term_sig.recv() => { app.editor_flush_recovery(); break; }
            _ = hup_sig.recv() => { app.editor_flush_recovery(); break; }
        }
        if let Some(l) = live.as_mut() {
            let mut taken = 0;
            while taken < 4096 {
                match l.session.events.try_recv() {
                    Ok(ev) => {
                        pending.extend(app.on_session(ev));
                        taken += 1;
                    }
                    Err(_) => break,
                }
            }
        }
        term.draw(|f| super::view::draw(&mut app, f))?;
    }
    // No server is left waiting on a question nobody will see.
    app.cancel_questions("the workbench was closed");
    if let Some(l) = live.take() {
        l.session.handle.send(Command::Cancel);
        close(l);
    }
    drop(guard);
    Ok(0)
}

fn signal(kind: tokio::signal::unix::SignalKind) -> Signal {
    Signal(tokio::signal::unix::signal(kind).ok())
}

/// A Unix signal stream, or one that never fires where it cannot be set up.
struct Signal(Option<tokio::signal::unix::Signal>);

impl Signal {
    async fn recv(&mut self) {
        match &mut self.0 {
            Some(s) => {
                s.recv().await;
            }
            None => std::future::pending().await,
        }
    }
}

async fn recv(rx: Option<&mut mpsc::Receiver<Event>>) -> Option<Event> {
    match rx {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

fn close(l: Live) {
    tokio::spawn(async move {
        drop(l.session.handle);
        let _ = tokio::time::timeout(Duration::from_secs(2), l.session.task).await;
        if let Ok(pool) = Arc::try_unwrap(l.pool) {
            pool.close().await;
        }
    });
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
        }
        Err(e) => app.say(
            format!("cannot open the link ({opener}: {e}); open it by hand"),
            true,
        ),
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
    let words = crate::engine::mcp::servers::split_command(&program)
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
