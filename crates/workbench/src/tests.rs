//! The workbench driven whole, as a person drives it, inside the crate so
//! the tests can read what the app holds: `screens` feeds the app a
//! session's events and keys and compares whole screens with snapshots;
//! `live` runs real sessions against the demo server (over HTTP, in this
//! process) and other MCP servers through the same driver the terminal
//! loop uses; `durable` follows durable runs without Restate; `review`
//! holds the second review's items (issue 48) through the real key path;
//! `run_truth` how the app shows what a run really did (issue 48);
//! `lock` what changed since `pipewright.lock`, marked as you type.

mod durable;
mod live;
mod lock;
mod recording;
mod review;
mod run_truth;
mod screens;

use std::path::PathBuf;

/// The repository's root (the workspace's).
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The venv `.ci/run` makes (`target/pyvenv`, with `pip install mcp`), or
/// `PIPEWRIGHT_PYTHON`; a missing one fails the test with the command that
/// makes it.
fn python() -> PathBuf {
    let p = std::env::var_os("PIPEWRIGHT_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/pyvenv/bin/python"));
    assert!(
        p.exists(),
        "{} is missing: python3 -m venv target/pyvenv && target/pyvenv/bin/pip install mcp==2.3.0",
        p.display()
    );
    p
}

/// The built-in demo server over HTTP on 127.0.0.1, on a thread and a
/// runtime of its own (as a server process would be, so the workbench's
/// calls are not slowed by the test's own tasks), until dropped.
struct Demo {
    url: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Demo {
    /// Starts one with `options`.
    fn start(options: pipewright_demo::DemoServerOptions) -> Demo {
        let (url_tx, url_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime for the demo server");
            runtime.block_on(async move {
                let (_, handle) = pipewright_demo::spawn_http_with("127.0.0.1:0", options)
                    .await
                    .expect("the demo server listens");
                let _ = url_tx.send(handle.url());
                let _ = stopped.await;
                let _ = handle.shutdown().await;
            });
        });
        Demo {
            url: url_rx.recv().expect("the demo server's address"),
            stop: Some(stop),
        }
    }

    /// Its MCP endpoint, `http://127.0.0.1:PORT/mcp`.
    fn url(&self) -> &str {
        &self.url
    }
}

impl Drop for Demo {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}
