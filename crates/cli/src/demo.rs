//! `pipewright demo-server`: the built-in MCP server.

use std::net::SocketAddr;

use clap::Args;

use pipewright_demo::{self, DemoServerOptions};
use pipewright_engine::options::exit;

/// Arguments of `demo-server`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Serve Streamable HTTP at this address (e.g. 127.0.0.1:8000, port 0
    /// picks one) instead of stdio; the endpoint is `/mcp`.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,
    /// Also serve the official MCP conformance suite's fixture tools
    /// (`test_*`), resources, prompts and completions, as its server
    /// scenarios expect (tests/conformance/run.sh).
    #[arg(long)]
    pub conformance_fixtures: bool,
}

/// Serves until stdin closes (stdio) or Ctrl-C (HTTP).
pub async fn demo(args: DemoArgs) -> u8 {
    let opts = DemoServerOptions {
        fixtures: args.conformance_fixtures,
        ..DemoServerOptions::default()
    };
    let res = match args.http {
        Some(addr) => pipewright_demo::serve_http(addr, opts).await,
        None => pipewright_demo::serve_stdio(opts).await,
    };
    match res {
        Ok(()) => exit::OK,
        Err(e) => {
            eprintln!("pipewright demo-server: {e:#}");
            exit::FAILED
        }
    }
}
