//! The workbench's engine side, without a terminal: it carries out the
//! app's [`Effect`]s (starting a session on its servers, sending commands,
//! holding a session while the person decides about destructive calls,
//! saving traces) and hands back what comes from the engine (session
//! events, a session that started or failed to, servers' questions). The
//! terminal loop and the end-to-end tests drive the same driver, so a test
//! that presses keys exercises the real path from key to server.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use pipewright_engine::mcp::ConnectOptions;
use pipewright_engine::mcp::servers::{self, ServerPool};
use pipewright_engine::plan::preflight::{self, Preflight, ToolLists};
use pipewright_engine::redact::Redactor;
use pipewright_engine::run::events::Event;
use pipewright_engine::run::session::{self, Command, Session};

use super::app::{App, Effect, Preflighted};
use super::ask::responder::{self, Asker};
use super::inbox::Message;

/// A started session and the pool it calls through.
struct Live {
    session: Session,
    pool: Arc<ServerPool>,
}

type Started = Result<(Live, Preflight), NotStarted>;

/// Why a session did not start: the server that could not (`None`:
/// before any was reached, say a setting that did not resolve), and the
/// error in words.
struct NotStarted {
    server: Option<String>,
    error: String,
}

/// Something the engine side produced, to be handed to the app with
/// [`Driver::take`].
pub struct Incoming(Came);

enum Came {
    /// A session event.
    Session(Event),
    /// The session's actor ended while the driver held it (a crash).
    SessionGone,
    /// A session finished connecting (or failed to), for generation `g`.
    Started(u64, Started, Vec<Command>),
    /// A background task's message (a question, a provider's reply).
    Message(Message),
}

/// The engine side of the workbench's loop.
pub struct Driver {
    start_tx: mpsc::UnboundedSender<(u64, Started, Vec<Command>)>,
    start_rx: mpsc::UnboundedReceiver<(u64, Started, Vec<Command>)>,
    live: Option<Live>,
    /// A session waiting for the person to allow its destructive calls.
    held: Option<(Live, Vec<Command>)>,
    /// Commands given while the session is still connecting.
    queued: Vec<Command>,
    /// Bumped for every session started or dropped: late results of an
    /// older one are closed unseen.
    generation: u64,
    msg_tx: mpsc::UnboundedSender<Message>,
    msg_rx: mpsc::UnboundedReceiver<Message>,
}

impl Default for Driver {
    fn default() -> Self {
        Self::new()
    }
}

impl Driver {
    pub fn new() -> Driver {
        let (start_tx, start_rx) = mpsc::unbounded_channel();
        let (msg_tx, msg_rx) = mpsc::unbounded_channel();
        Driver {
            start_tx,
            start_rx,
            live: None,
            held: None,
            queued: Vec::new(),
            generation: 0,
            msg_tx,
            msg_rx,
        }
    }

    /// Carries out `effects`; returns those that need the terminal
    /// (`ExternalEditor`, `OpenUrl`) for the caller to carry out.
    pub fn apply(&mut self, app: &mut App, effects: Vec<Effect>) -> Vec<Effect> {
        let mut rest = Vec::new();
        for eff in effects {
            match eff {
                Effect::Start {
                    pipeline,
                    comp,
                    cfg,
                    breakpoints,
                    then,
                } => {
                    if let Some(old) = self.live.take() {
                        close(old);
                    }
                    app.cancel_questions("the session was replaced");
                    self.generation += 1;
                    let tx = self.start_tx.clone();
                    let mut cfg = cfg;
                    // The person at the workbench answers the servers.
                    cfg.human = Asker::new(self.msg_tx.clone(), self.generation).human();
                    let opts = app.opts.clone();
                    let g = self.generation;
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
                            let (specs, pool) =
                                connect(&pipeline, &comp, &opts, &vars, &redactor).await?;
                            // Preflight on the tool lists just fetched: a
                            // bad node or a destructive call is known before
                            // anything is called.
                            let tools = tool_lists(&pool);
                            let default = (specs.len() == 1)
                                .then(|| specs.keys().next().cloned())
                                .flatten();
                            let mut report = preflight::check(
                                &[(&*comp, cfg.vars.clone())],
                                &tools,
                                default.as_deref(),
                                &cfg.env,
                            );
                            // And against the lock, with the servers'
                            // versions now that they answered.
                            if let Some(pinned) = &cfg.pinned {
                                let mut pinned = (**pinned).clone();
                                pinned.handshakes = pool
                                    .connections()
                                    .map(|c| (c.name().to_owned(), c.server_info()))
                                    .collect();
                                preflight::pinned::check_lock(
                                    &mut report,
                                    &[&*comp],
                                    &tools,
                                    default.as_deref(),
                                    &pinned,
                                );
                            }
                            let pool = Arc::new(pool);
                            let session =
                                session::start(comp, pool.clone(), *cfg, redactor.clone());
                            Ok::<(Live, Preflight), NotStarted>((Live { session, pool }, report))
                        }
                        .await;
                        let _ = tx.send((g, started, then_all));
                    });
                }
                Effect::Send(cmd) => match &self.live {
                    Some(l) => {
                        l.session.handle.send(cmd);
                    }
                    None => self.queued.push(cmd),
                },
                Effect::Proceed => {
                    if let Some((l, then)) = self.held.take() {
                        for c in then.into_iter().chain(self.queued.drain(..)) {
                            l.session.handle.send(c);
                        }
                        self.live = Some(l);
                    }
                }
                Effect::DropSession => {
                    app.cancel_questions("the session was dropped");
                    self.generation += 1;
                    self.queued.clear();
                    if let Some((old, _)) = self.held.take() {
                        close(old);
                    }
                    if let Some(old) = self.live.take() {
                        close(old);
                    }
                }
                Effect::SaveTrace(trace) => save_trace(app, &trace),
                Effect::AskProvider {
                    ticket,
                    provider,
                    request,
                } => {
                    let tx = self.msg_tx.clone();
                    tokio::spawn(async move {
                        let result = provider.complete(&request).await;
                        let _ = tx.send(Message::Sampled { ticket, result });
                    });
                }
                Effect::Durable {
                    restate,
                    request,
                    source,
                    cancel,
                } => {
                    let tx = self.msg_tx.clone();
                    tokio::spawn(async move {
                        let opens = tx.clone();
                        let mut on_open = move |o: pipewright_engine::run::durable::Opened| {
                            let _ = opens.send(Message::DurableOpened { node: o.node });
                        };
                        let lines = tx.clone();
                        let mut on_call = move |c: pipewright_engine::run::durable::Recorded| {
                            let ok = matches!(&c.outcome, Ok(o) if !o.is_error);
                            let line = format!(
                                "durable: {} {} · {} · journaled by {}",
                                if ok { "✓" } else { "✗" },
                                c.node.as_deref().unwrap_or("-"),
                                c.tool,
                                c.worker
                            );
                            let _ = lines.send(Message::DurableCall {
                                node: c.node.clone(),
                                ok,
                                line,
                            });
                            Box::pin(async {}) as futures::future::BoxFuture<'static, ()>
                        };
                        // Its questions open here like a session's; the
                        // answer goes to Restate, unless it is the
                        // workbench going away (it carries why).
                        let asks = tx.clone();
                        let there = (*restate).clone();
                        let over = tokio_util::sync::CancellationToken::new();
                        let ended = over.clone();
                        let mut on_question = move |id: &str, q| {
                            let asks = asks.clone();
                            let give = move |question, reply| {
                                let sent = asks.send(Message::DurableQuestion { question, reply });
                                Box::pin(async move { sent.is_ok() })
                                    as futures::future::BoxFuture<'static, bool>
                            };
                            pipewright_engine::run::durable::client::relay(
                                &there,
                                id,
                                q,
                                give,
                                |a| a.error.is_none(),
                                &over,
                            );
                        };
                        // The run belongs to Restate: closing the workbench
                        // stops following it, not the run; `x` cancels it.
                        let result = pipewright_engine::run::durable::client::run_quiet(
                            &restate,
                            &request,
                            &cancel,
                            &mut on_open,
                            &mut on_call,
                            &mut on_question,
                        )
                        .await
                        .map(Box::new);
                        ended.cancel();
                        let _ = tx.send(Message::DurableDone { result, source });
                    });
                }
                Effect::Judge(mut job) => {
                    if job.tools.is_empty()
                        && let Some(l) = &self.live
                    {
                        job.tools = tool_lists(&l.pool);
                    }
                    super::judging::spawn(*job, self.msg_tx.clone());
                }
                Effect::FetchTools {
                    key,
                    pipeline,
                    comp,
                    vars,
                } => {
                    if let Some(l) = &self.live {
                        // The session's pool has them (read again when a
                        // server said its list changed).
                        let lists = tool_lists(&l.pool);
                        let effects = app.on_message(Message::Tools {
                            key,
                            result: Ok(lists),
                        });
                        rest.extend(self.apply(app, effects));
                        continue;
                    }
                    let tx = self.msg_tx.clone();
                    let opts = app.opts.clone();
                    tokio::spawn(async move {
                        let redactor = Redactor::default();
                        let result = async {
                            let (_, pool) = connect(&pipeline, &comp, &opts, &vars, &redactor)
                                .await
                                .map_err(|e| e.error)?;
                            let lists = tool_lists(&pool);
                            pool.close().await;
                            Ok::<ToolLists, String>(lists)
                        }
                        .await;
                        let _ = tx.send(Message::Tools { key, result });
                    });
                }
                Effect::Follow(job) => crate::recording::spawn(*job, self.msg_tx.clone()),
                Effect::WriteRecording(job) => crate::recording::write(*job, self.msg_tx.clone()),
                Effect::Quit => app.quit = true,
                other @ (Effect::ExternalEditor | Effect::OpenUrl(_) | Effect::Copy(_)) => {
                    rest.push(other)
                }
            }
        }
        rest
    }

    /// Waits for the next thing from the engine side. Cancel-safe: it only
    /// awaits channel receives.
    pub async fn next(&mut self) -> Incoming {
        let session_rx = self.live.as_mut().map(|l| &mut l.session.events);
        tokio::select! {
            ev = recv(session_rx) => Incoming(match ev {
                Some(ev) => Came::Session(ev),
                None => Came::SessionGone,
            }),
            Some((g, started, then)) = self.start_rx.recv() => Incoming(Came::Started(g, started, then)),
            Some(m) = self.msg_rx.recv() => Incoming(Came::Message(m)),
        }
    }

    /// Hands what came to the app; returns the effects it asked for.
    pub fn take(&mut self, app: &mut App, incoming: Incoming) -> Vec<Effect> {
        match incoming.0 {
            Came::Session(ev) => app.on_session(ev),
            Came::SessionGone => {
                // The session ended (it cannot while we hold its handle;
                // this is a crash of the actor): start afresh next run.
                self.live = None;
                app.on_start_failed("the session ended unexpectedly; F5 starts a new one");
                Vec::new()
            }
            Came::Started(g, started, then) => {
                if g != self.generation {
                    if let Ok((l, _)) = started {
                        close(l);
                    }
                    return Vec::new();
                }
                match started {
                    Ok((l, report)) => {
                        app.on_session_tools(tool_lists(&l.pool));
                        match app.on_preflight(&report) {
                            Preflighted::Go => {
                                for c in then.into_iter().chain(self.queued.drain(..)) {
                                    l.session.handle.send(c);
                                }
                                self.live = Some(l);
                            }
                            Preflighted::Ask => self.held = Some((l, then)),
                            Preflighted::Stop => {
                                self.queued.clear();
                                close(l);
                            }
                        }
                    }
                    Err(e) => {
                        self.queued.clear();
                        app.on_server_failed(e.server.as_deref(), &e.error);
                    }
                }
                Vec::new()
            }
            // A question of a session dropped since: nobody shows it.
            Came::Message(Message::Question {
                reply,
                generation: g,
                ..
            }) if g != self.generation => {
                let _ = reply.send(responder::cancelled("the session was dropped"));
                Vec::new()
            }
            Came::Message(m) => app.on_message(m),
        }
    }

    /// Takes in every session event already waiting (at most `max`), so a
    /// burst is drawn once.
    pub fn drain(&mut self, app: &mut App, max: usize) -> Vec<Effect> {
        let mut effects = Vec::new();
        if let Some(l) = self.live.as_mut() {
            for _ in 0..max {
                match l.session.events.try_recv() {
                    Ok(ev) => effects.extend(app.on_session(ev)),
                    Err(_) => break,
                }
            }
        }
        effects
    }

    /// Closes the workbench's engine side: open questions are answered
    /// cancel, a run under way is cancelled and waited for (up to `grace`)
    /// so its trace is saved, then the servers are shut down.
    pub async fn shutdown(&mut self, app: &mut App, grace: Duration) {
        app.cancel_questions("the workbench was closed");
        if let Some((old, _)) = self.held.take() {
            close(old);
        }
        let Some(mut l) = self.live.take() else {
            return;
        };
        if app.run_in_progress() {
            l.session.handle.send(Command::Cancel);
            let deadline = tokio::time::Instant::now() + grace;
            while app.run_in_progress() {
                match tokio::time::timeout_at(deadline, l.session.events.recv()).await {
                    Ok(Some(ev)) => {
                        let effects = app.on_session(ev);
                        let rest = self.apply(app, effects);
                        drop(rest);
                    }
                    _ => break,
                }
            }
        }
        drop(l.session.handle);
        let _ = tokio::time::timeout(Duration::from_secs(2), l.session.task).await;
        if let Ok(pool) = Arc::try_unwrap(l.pool) {
            pool.close().await;
        }
    }
}

/// Keeps a finished run where History reads (the workbench's data
/// directory, `pipewright run`'s too); a failure is said on the status line,
/// never printed over the screen.
fn save_trace(app: &mut App, trace: &pipewright_engine::run::trace::Trace) {
    let Some(dir) = app.dirs.data() else {
        return;
    };
    let runs = pipewright_engine::run::store::Runs::at(dir.join("runs"))
        .capped(app.opts.settings.max_runs);
    if let Err(e) = runs.save_with_source(
        trace,
        app.run_source.as_deref().map(|s| (s, &app.opts.load)),
    ) {
        app.say(
            format!("could not save the run to {}: {e}", runs.dir.display()),
            true,
        );
    }
}

async fn recv(rx: Option<&mut mpsc::Receiver<Event>>) -> Option<Event> {
    match rx {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

/// Each connected server's tool list, by server name.
/// The servers `comp` calls, resolved as `run` resolves them (the
/// workbench's `--server`/`--url`, `vars` for their settings) and
/// connected; an error in words, secrets masked.
async fn connect(
    pipeline: &pipewright_engine::file::model::Pipeline,
    comp: &pipewright_engine::file::model::Composition,
    opts: &super::app::Options,
    vars: &indexmap::IndexMap<String, serde_json::Value>,
    redactor: &Redactor,
) -> Result<
    (
        indexmap::IndexMap<String, pipewright_engine::mcp::ServerSpec>,
        ServerPool,
    ),
    NotStarted,
> {
    let specs = servers::resolve(
        pipeline,
        &opts.servers,
        opts.url.as_deref(),
        vars,
        &opts.settings.env,
        redactor,
    )
    .map_err(|error| NotStarted {
        server: None,
        error,
    })?;
    let needed = servers::needed(comp, &specs);
    // The workbench holds its connections: it listens for tool changes.
    // A login opens a browser and prints nothing: the screen is ours.
    let opts = ConnectOptions {
        listen: true,
        ..opts.settings.connect_options(|_| {})
    };
    let pool = ServerPool::connect(&specs, &needed, &opts)
        .await
        .map_err(|e| NotStarted {
            server: Some(e.server().to_owned()),
            error: redactor.text(&e.to_string()),
        })?;
    Ok((specs, pool))
}

fn tool_lists(pool: &ServerPool) -> ToolLists {
    pool.connections()
        .map(|c| (c.name().to_owned(), c.tools().to_vec()))
        .collect()
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
