//! The `pipewright` binary: parse the command line and hand off.

use std::{net::SocketAddr, process::ExitCode};

use pipewright::demo_server::{self, DemoServerOptions};

// Temporary until the clap CLI lands: only `pipewright demo-server [--http ADDR]`.
#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match args.as_slice() {
        ["demo-server"] => demo_server::serve_stdio(DemoServerOptions::default()).await,
        ["demo-server", "--http", addr] => match addr.parse::<SocketAddr>() {
            Ok(addr) => demo_server::serve_http(addr, DemoServerOptions::default()).await,
            Err(error) => Err(anyhow::anyhow!("invalid address {addr:?}: {error}")),
        },
        _ => {
            eprintln!("usage: pipewright demo-server [--http 127.0.0.1:PORT]");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("pipewright: {error:#}");
            ExitCode::FAILURE
        }
    }
}
