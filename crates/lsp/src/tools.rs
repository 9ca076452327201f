//! The tool lists a file's servers give, fetched in the background and
//! kept per set of servers. A fetch resolves the file's servers as `run`
//! does (its `vars:` for their settings, `${env.X}` from the environment,
//! no file declaring none: the built-in demo server), connects the ones
//! its nodes call, reads their `tools/list` and closes them again. It runs
//! when a file opens or its servers change, never for each keystroke.

use std::collections::HashMap;
use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender, unbounded};
use tokio::runtime::Handle;
use tokio::task::JoinHandle;

use pipewright_engine::environment::Environment;
use pipewright_engine::file::model::Pipeline;
use pipewright_engine::mcp::ConnectOptions;
use pipewright_engine::mcp::servers::{self, ServerPool};
use pipewright_engine::plan::preflight::ToolLists;
use pipewright_engine::redact::Redactor;

/// What a fetch brought: each server's tools, and the server of nodes that
/// name none.
#[derive(Debug, Default)]
pub struct Fetched {
    pub lists: ToolLists,
    pub default_server: Option<String>,
}

/// A fetch that ended: its key and what it brought or why it failed (in
/// words, secrets masked).
pub type Arrived = (String, Result<Fetched, String>);

enum State {
    Pending,
    Ready(Arc<Fetched>),
    Failed,
}

/// The lists by key, and the fetches under way.
pub struct Tools {
    states: HashMap<String, State>,
    tx: Sender<Arrived>,
    /// Where finished fetches arrive; the main loop waits on it.
    pub rx: Receiver<Arrived>,
    runtime: Handle,
    tasks: Vec<JoinHandle<()>>,
    /// How the file's servers are connected; `None`: nothing is
    /// (`--no-connect`), no lists, no preflight.
    connect: Option<ConnectOptions>,
    /// What the servers' `${env.X}` read.
    env: Environment,
}

/// Which servers, as declared and as the variables set them, and which of
/// them the nodes call: when this changes, the lists are fetched again.
pub fn key(p: &Pipeline) -> String {
    let declared: Vec<_> = p.servers.iter().map(|(n, d)| (n, &d.source)).collect();
    let mut called: Vec<Option<&str>> = p
        .compositions
        .iter()
        .flat_map(|c| &c.nodes)
        .filter(|n| n.mock.is_none() || n.compensate.is_some())
        .map(|n| n.server.as_deref())
        .collect();
    called.sort_unstable();
    called.dedup();
    format!("{declared:?}\u{0}{:?}\u{0}{called:?}", p.vars)
}

impl Tools {
    pub fn new(runtime: Handle, connect: Option<ConnectOptions>, env: Environment) -> Self {
        let (tx, rx) = unbounded();
        Self {
            env,
            states: HashMap::new(),
            tx,
            rx,
            runtime,
            tasks: Vec::new(),
            connect,
        }
    }

    /// The lists for `key` if they came; else a fetch for `p`'s servers is
    /// started (once per key: a failed one is not tried again until the
    /// servers change).
    pub fn want(&mut self, key: &str, p: &Pipeline) -> Option<Arc<Fetched>> {
        let opts = self.connect.clone()?;
        let env = self.env.clone();
        match self.states.get(key) {
            Some(State::Ready(f)) => return Some(f.clone()),
            Some(State::Pending | State::Failed) => return None,
            None => {}
        }
        self.states.insert(key.to_owned(), State::Pending);
        let tx = self.tx.clone();
        let (key, p) = (key.to_owned(), p.clone());
        self.tasks.retain(|t| !t.is_finished());
        self.tasks.push(self.runtime.spawn(async move {
            let result = fetch(&p, &opts, &env).await;
            let _ = tx.send((key, result));
        }));
        None
    }

    /// Keeps what a fetch brought; the lists when it succeeded.
    pub fn arrived(&mut self, key: String, result: Result<Fetched, String>) {
        let state = match result {
            Ok(f) => State::Ready(Arc::new(f)),
            Err(_) => State::Failed,
        };
        self.states.insert(key, state);
    }

    /// The lists already fetched for `key`.
    pub fn ready(&self, key: &str) -> Option<Arc<Fetched>> {
        match self.states.get(key) {
            Some(State::Ready(f)) => Some(f.clone()),
            _ => None,
        }
    }

    /// The fetches still under way, for the caller to wait on (each closes
    /// its servers) or abort (a dropped connection stops its server).
    pub fn take_tasks(&mut self) -> Vec<JoinHandle<()>> {
        std::mem::take(&mut self.tasks)
    }
}

async fn fetch(p: &Pipeline, opts: &ConnectOptions, env: &Environment) -> Result<Fetched, String> {
    let redactor = Redactor::default();
    let specs = servers::resolve(p, &[], None, &p.vars, env, &redactor)?;
    let default_server = servers::default_server(&specs);
    let mut needed: Vec<String> = Vec::new();
    for c in &p.compositions {
        for name in servers::needed(c, &specs) {
            if !needed.contains(&name) {
                needed.push(name);
            }
        }
    }
    let pool = ServerPool::connect(&specs, &needed, opts)
        .await
        .map_err(|e| redactor.text(&e.to_string()))?;
    let lists = pool
        .connections()
        .map(|c| (c.name().to_owned(), c.tools().to_vec()))
        .collect();
    pool.close().await;
    Ok(Fetched {
        lists,
        default_server,
    })
}
