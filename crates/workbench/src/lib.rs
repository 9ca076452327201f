//! The workbench: `pipewright edit FILE`. A ratatui app that pairs a YAML
//! editor with a live DAG view and a per-node trace inspector, driving the
//! engine's session. Nothing here is needed by the engine.

mod app;
mod ask;
mod complete;
mod component;
mod config;
mod copy;
mod dag;
mod driver;
mod editor;
mod find;
mod history;
mod inbox;
mod inspector;
mod judging;
mod keys;
mod messages;
mod mode;
mod msg;
mod overlay;
mod palette;
mod recording;
mod results;
mod session;
mod state;
mod terminal;
mod theme;
mod timeline;
mod tools;
mod viewing;
mod window;

#[cfg(test)]
mod tests;

// The crate's API. What the command line calls: `edit` with its
// arguments (below), and the spinner its progress line turns with.
pub use theme::SPINNER;

// The workbench without a terminal, for the benches at the root
// (benches/render.rs, authoring.rs, dag.rs, editor.rs, inspector.rs) and
// the root tests that compare it with the binary (plan_parity.rs) or read
// what it writes (sweep_secrets.rs: the recovery copy) and shows
// (docs_book.rs: the keymap's keys page).
pub use app::{App, Options};
pub use config::{Config, Dirs};
pub use dag::{DagLayout, DagState, DagView};
// The loop's engine side, for a bench that follows a recording through
// the same path as the terminal (benches/recording.rs).
pub use driver::Driver;
pub use editor::recovery::Recovery;
pub use editor::{Editor, RECOVERY_DEBOUNCE};
pub use inspector::{Inspector, Tab};
pub use keys::{Action, Keymap};
pub use state::NodeVisual;
pub use theme::Theme;

use std::path::PathBuf;
use std::time::Duration;

use indexmap::IndexMap;
use serde_json::Value;

use pipewright_engine::mcp::servers::ServerArg;

/// What `pipewright edit` opens: the command line's values, already read
/// and checked by the driver.
#[derive(Debug)]
pub struct EditOptions {
    /// The pipeline file to open (created on the first save if missing).
    pub file: PathBuf,
    /// The composition shown and run first (the palette switches).
    pub composition: Option<String>,
    /// The case row whose vars a run takes (default: the first row).
    pub case: Option<String>,
    /// `--var` values, over the file's `vars:` and the case row.
    pub vars: IndexMap<String, Value>,
    /// The server URL when the file declares none.
    pub url: Option<String>,
    /// Servers added or overridden by the command line.
    pub servers: Vec<ServerArg>,
    /// The timeout of every call whose node sets none.
    pub timeout: Option<Duration>,
    /// The colour theme's name (`None`: config.yaml's, else dark).
    pub theme: Option<String>,
    /// Where the palette's "durable run" runs the saved file.
    pub restate: Option<pipewright_engine::run::durable::client::Restate>,
    /// `--record PATH`: open following this session file, or the newest
    /// session of this folder and each new one (the recording view).
    pub record: Option<PathBuf>,
    /// The tools a new file's scaffold lists (`tools/list` entries: the
    /// built-in demo server's), when FILE does not exist and no server is
    /// given.
    pub scaffold_tools: Vec<Value>,
}

/// Why the workbench did not open, or stopped.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    /// The config, the theme, the `--server` names or the file could not
    /// be read: a usage error, said in a sentence.
    #[error("{0}")]
    Invalid(String),
    /// The terminal failed under the workbench.
    #[error("terminal error: {0}")]
    Terminal(#[from] std::io::Error),
}

/// Opens the workbench on a terminal the caller has checked is one, and
/// runs it until the user quits; `Ok` is the exit code (0, or 128 plus
/// the number of the signal that ended it).
pub async fn edit(
    opts: EditOptions,
    settings: pipewright_engine::settings::Settings,
) -> Result<u8, EditError> {
    let dirs = config::Dirs::of(&settings);
    let (mut cfg, sampling, theme_chosen) = config::Config::load_all(&dirs, opts.theme.as_deref())
        .map_err(|e| EditError::Invalid(e.to_string()))?;
    // NO_COLOR: no colour at all; focus, selection and tabs show by bold,
    // reverse video and markers.
    if theme::Theme::no_color_env() {
        cfg.theme = cfg.theme.monochrome();
    }
    // Nodes may name the servers `--server` adds.
    let load = pipewright_engine::mcp::servers::cli_server_names(&opts.servers, &[], &settings.env)
        .map(|names| settings.load_options(names))
        .map_err(EditError::Invalid)?;
    // A new file for the demo server starts from its scaffold.
    let is_new = !opts.file.exists() && opts.servers.is_empty() && opts.url.is_none();
    let editor = match editor::Editor::open(&opts.file, dirs.data.as_deref()) {
        Ok(mut e) => {
            // Before the first validation starts (on a later tick).
            e.set_load_options(load.clone());
            e
        }
        Err(e) => {
            return Err(EditError::Invalid(format!(
                "cannot open {}: {e}",
                opts.file.display()
            )));
        }
    };
    let scaffold_tools = opts.scaffold_tools;
    let opts = app::Options {
        file: opts.file,
        composition: opts.composition,
        case: opts.case,
        vars: opts.vars,
        servers: opts.servers,
        url: opts.url,
        theme: opts.theme,
        timeout: opts.timeout,
        restate: opts.restate,
        record: opts.record,
        judge: pipewright_engine::eval::JudgeFlags::from_environment(&settings.env),
        settings,
        load: load.clone(),
    };
    let mut app = app::App::new(opts, dirs, cfg, editor);
    if is_new && !app.editor.recovery_pending() {
        // After the app chose the editor for an empty file.
        let at = app.opts.settings.env.absolute(&app.opts.file);
        let (text, line) = new_file_text(&scaffold_tools, at.as_deref());
        app.editor.start_new(&text);
        app.editor.goto(line, 7);
    }
    app.sampling = sampling;
    app.theme_default = !theme_chosen;
    Ok(terminal::run(app).await?)
}

/// The text a new file at `file` (absolute; for its `$schema` modeline)
/// starts with: the engine's scaffold for `defs` (the built-in demo
/// server's tools, as `tools/list` gives them), none chosen, and the
/// 1-based line of its example node.
pub fn new_file_text(defs: &[Value], file: Option<&std::path::Path>) -> (String, usize) {
    use pipewright_engine::file::scaffold::{Request, ToolDef, scaffold};
    let none = Value::Null;
    let tools: Vec<ToolDef<'_>> = defs
        .iter()
        .filter_map(|d| {
            Some(ToolDef {
                server: pipewright_engine::mcp::servers::DEMO,
                name: d.get("name")?.as_str()?,
                description: d.get("description").and_then(Value::as_str),
                input_schema: d.get("inputSchema").unwrap_or(&none),
            })
        })
        .collect();
    let text = scaffold(&Request {
        name: "main",
        servers: &[],
        tools: &tools,
        chosen: &[],
        file,
    });
    let line = text
        .lines()
        .position(|l| l.trim_start().starts_with("- id:"))
        .map_or(1, |i| i + 1);
    (text, line)
}
