//! `pipewright worker FILE…`: a Restate service endpoint that runs the
//! compositions of FILE as durable workflows (`run --on restate://…`).
//!
//! The files are loaded, their servers connected and every composition
//! checked as `serve` does; each composition is then a run that Restate
//! starts, and starts again on a worker after a crash. Inside, the run is
//! an ordinary session whose calls go through a
//! [`DurableCaller`](pipewright_engine::run::durable::DurableCaller): every
//! outcome is written into the workflow's journal before the run sees it,
//! and a resumed run is answered from the journal (see [`journal`]).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::serve::handler::{Flags, PipelineServer};
use pipewright_engine::options::exit;
use pipewright_engine::settings::Settings;

mod journal;
mod listen;
mod questions;
mod register;
mod shared;

use shared::Shared;

/// What `worker` runs and where: the command line's values.
#[derive(Debug)]
pub struct WorkerOptions {
    /// Pipeline files whose compositions this worker runs.
    pub files: Vec<PathBuf>,
    /// Where Restate reaches this worker (HTTP/2 without TLS).
    pub listen: SocketAddr,
    /// Restate's admin API, where the worker registers itself.
    pub restate: String,
    /// The URL to register instead of `http://ADDR`.
    pub advertise: Option<String>,
    /// Do not register; print the command that does.
    pub no_register: bool,
    /// This worker's name in traces and history (default `worker@ADDR`).
    pub name: Option<String>,
    /// Also run compositions that call tools marked destructive.
    pub yes: bool,
    /// Hold each file to its `pipewright.lock` (`--locked`).
    pub locked: bool,
}

/// `worker`: returns the exit code.
pub async fn worker(args: WorkerOptions, settings: Settings) -> u8 {
    let name = args
        .name
        .clone()
        .unwrap_or_else(|| format!("worker@{}", args.listen));
    let (served, upstreams) =
        match super::serve::load_all(&args.files, args.yes, args.locked, &settings).await {
            Ok(loaded) => loaded,
            Err(code) => return code,
        };
    let hashes: HashMap<String, String> = served
        .iter()
        .map(|t| (t.name.clone(), t.file_sha256.clone()))
        .collect();
    if served.is_empty() {
        eprintln!("error: nothing to run");
        return exit::INVALID;
    }
    let names: Vec<String> = served.iter().map(|s| s.name.clone()).collect();
    let server = PipelineServer::new(
        served,
        upstreams,
        Flags {
            save: false,
            meta_tool: false,
            yes: args.yes,
            allow_env: Vec::new(),
            remote: None,
            settings: settings.clone(),
        },
    );
    let shared = Arc::new(Shared {
        name: name.clone(),
        server,
        hashes,
    });
    let listener = match tokio::net::TcpListener::bind(args.listen).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("error: cannot listen on {}: {e}", args.listen);
            return exit::INVALID;
        }
    };
    let own = format!("http://{}", listener.local_addr().unwrap_or(args.listen));
    eprintln!(
        "worker {name} listening on {own}: {} composition(s): {}",
        names.len(),
        names.join(", ")
    );
    let upstreams = shared.server.upstreams().clone();
    let ready: listen::Readiness = Arc::new(move || {
        let (connected, each) = crate::serve::health::upstreams(&upstreams);
        (connected, serde_json::json!({ "upstreams": each }))
    });
    let endpoint = restate_sdk::endpoint::Endpoint::builder()
        .bind(journal::definition(shared))
        .build();
    let mut signals = pipewright_headless::Signals::listen();
    let serving = listen::serve(listener, endpoint, ready, async move {
        signals.next().await;
    });
    let uri = args.advertise.clone().unwrap_or(own);
    if args.no_register {
        eprintln!("{}", register::command(&uri, &args.restate));
    } else {
        let admin = args.restate.clone();
        tokio::spawn(async move {
            // The endpoint answers Restate's discovery once the accept loop
            // runs: give it a moment.
            tokio::time::sleep(Duration::from_millis(50)).await;
            match register::register(&admin, &uri).await {
                Ok(()) => eprintln!("registered with {admin} as {uri}"),
                Err(e) => eprintln!(
                    "warning: could not register with {admin}: {e}\n{}",
                    register::command(&uri, &admin)
                ),
            }
        });
    }
    serving.await;
    exit::OK
}
