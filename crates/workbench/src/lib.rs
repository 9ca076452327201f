//! The workbench: `pipewright edit FILE`. A ratatui app that pairs a YAML
//! editor with a live DAG view and a per-node trace inspector, driving the
//! engine's session. Nothing here is needed by the engine.

pub mod app;
pub mod ask;
pub mod complete;
pub mod config;
pub mod copy;
pub mod dag;
pub mod driver;
pub mod editor;
pub mod find;
pub mod history;
pub mod inbox;
pub mod inspector;
pub mod judging;
pub mod keys;
pub mod messages;
pub mod mode;
pub mod overlay;
pub mod palette;
pub mod preflight;
pub mod results;
pub mod session;
pub mod state;
pub mod status;
pub mod terminal;
pub mod theme;
pub mod timeline;
pub mod view;

use std::path::PathBuf;

use clap::Args;
use std::io::IsTerminal;

use pipewright_engine::mcp::servers::ServerArg;
use pipewright_engine::options::exit;

/// Arguments of `edit`.
#[derive(Debug, Args)]
pub struct EditArgs {
    /// The pipeline file to open (created on the first save if missing).
    pub file: PathBuf,
    /// Show and run this composition (the palette switches).
    #[arg(long, value_name = "NAME")]
    pub composition: Option<String>,
    /// Run with this case row's vars (default: the first row).
    #[arg(long, value_name = "NAME")]
    pub case: Option<String>,
    /// A `${var.NAME}` value: NAME=VALUE. Repeatable.
    #[arg(long = "var", value_name = "NAME=VALUE")]
    pub vars: Vec<String>,
    /// The server URL when the file declares none.
    #[arg(long)]
    pub url: Option<String>,
    /// Add or override a server: NAME=URL or NAME='COMMAND ARGS'.
    #[arg(long = "server", value_name = "NAME=URL|CMD")]
    pub servers: Vec<ServerArg>,
    /// Timeout for every call whose node sets none (e.g. 30s).
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
    /// Colour theme: dark, light, high-contrast, or a file in the config
    /// directory's themes/.
    #[arg(long, value_name = "NAME")]
    pub theme: Option<String>,
    /// Offer "durable run" in the palette: run the saved file on Restate
    /// (its ingress at `restate://HOST:PORT`), where a `pipewright worker`
    /// holds it.
    #[arg(long, value_name = "restate://HOST:PORT")]
    pub on: Option<String>,
    /// With --on: Restate's admin API (default port 9070 of the --on host).
    #[arg(long, value_name = "URL", env = "PIPEWRIGHT_RESTATE_ADMIN")]
    pub restate_admin: Option<String>,
}

/// Opens the workbench; returns the exit code.
pub async fn edit(args: EditArgs, settings: pipewright_engine::settings::Settings) -> u8 {
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        eprintln!(
            "pipewright edit: needs a terminal (use `pipewright run {}` in scripts and CI)",
            args.file.display()
        );
        return exit::INVALID;
    }
    let vars = match pipewright_engine::options::parse_vars(&args.vars) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::INVALID;
        }
    };
    let timeout =
        match pipewright_engine::options::duration_flag("timeout", args.timeout.as_deref()) {
            Ok(d) => d,
            Err(e) => {
                eprintln!("error: {e}");
                return exit::INVALID;
            }
        };
    let restate = match &args.on {
        Some(on) => match pipewright_engine::run::durable::client::Restate::parse(
            on,
            args.restate_admin.as_deref(),
        ) {
            Ok(r) => Some(r),
            Err(e) => {
                eprintln!("error: {e}");
                return exit::INVALID;
            }
        },
        None => None,
    };
    let dirs = config::Dirs::of(&settings);
    let (mut cfg, sampling) = match config::Config::load_with_sampling(&dirs, args.theme.as_deref())
    {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return exit::INVALID;
        }
    };
    // NO_COLOR: no colour at all; focus, selection and tabs show by bold,
    // reverse video and markers.
    if theme::Theme::no_color_env() {
        cfg.theme = cfg.theme.monochrome();
    }
    // Nodes may name the servers `--server` adds.
    let load = match pipewright_engine::mcp::servers::cli_server_names(
        &args.servers,
        &[],
        &settings.env,
    ) {
        Ok(names) => settings.load_options(names),
        Err(e) => {
            eprintln!("error: {e}");
            return exit::INVALID;
        }
    };
    // A new file for the demo server starts from its scaffold.
    let is_new = !args.file.exists() && args.servers.is_empty() && args.url.is_none();
    let editor = match editor::Editor::open(&args.file, dirs.data.as_deref()) {
        Ok(mut e) => {
            // Before the first validation starts (on a later tick).
            e.set_load_options(load.clone());
            e
        }
        Err(e) => {
            eprintln!("error: cannot open {}: {e}", args.file.display());
            return exit::INVALID;
        }
    };
    let opts = app::Options {
        file: args.file,
        composition: args.composition,
        case: args.case,
        vars,
        servers: args.servers,
        url: args.url,
        theme: args.theme,
        timeout,
        restate,
        judge: pipewright_engine::eval::JudgeFlags::from_environment(&settings.env),
        settings,
        load: load.clone(),
    };
    let mut app = app::App::new(opts, dirs, cfg, editor);
    if is_new && !app.editor.recovery_pending() {
        // After the app chose the editor for an empty file.
        let (text, line) = new_file_text();
        app.editor.start_new(&text);
        app.editor.goto(line, 7);
    }
    app.sampling = sampling;
    match terminal::run(app).await {
        Ok(code) => code,
        Err(e) => {
            eprintln!("pipewright edit: terminal error: {e}");
            exit::FAILED
        }
    }
}

/// The text a new file starts with: the engine's scaffold for the built-in
/// demo server's tools, none chosen, and the 1-based line of its commented
/// example node.
pub fn new_file_text() -> (String, usize) {
    use pipewright_engine::file::scaffold::{Request, ToolDef, scaffold};
    let defs = pipewright_demo::tool_definitions();
    let none = serde_json::Value::Null;
    let tools: Vec<ToolDef<'_>> = defs
        .iter()
        .filter_map(|d| {
            Some(ToolDef {
                server: pipewright_engine::mcp::servers::DEMO,
                name: d.get("name")?.as_str()?,
                description: d.get("description").and_then(serde_json::Value::as_str),
                input_schema: d.get("inputSchema").unwrap_or(&none),
            })
        })
        .collect();
    let text = scaffold(&Request {
        name: "main",
        servers: &[],
        tools: &tools,
        chosen: &[],
    });
    let line = text
        .lines()
        .position(|l| l.trim_start().starts_with("# - id:"))
        .map_or(1, |i| i + 1);
    (text, line)
}

impl EditArgs {
    /// `pipewright FILE`: the workbench with every option at its default.
    pub fn from_file(file: PathBuf) -> EditArgs {
        EditArgs {
            file,
            composition: None,
            case: None,
            vars: Vec::new(),
            url: None,
            servers: Vec::new(),
            timeout: None,
            theme: None,
            on: None,
            restate_admin: None,
        }
    }
}
