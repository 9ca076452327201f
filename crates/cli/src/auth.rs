//! `pipewright auth login|logout|status SERVER`: log in to an
//! OAuth-protected Streamable HTTP server once, so runs, `tools` and the
//! workbench can use (and refresh) its token; see or forget logins. Tokens
//! are never printed.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use serde_json::json;

use pipewright_engine::file::import::Dialect;
use pipewright_engine::file::open::load_file_with;
use pipewright_engine::mcp::ServerSpec;
use pipewright_engine::mcp::auth::{
    self, AuthConfig, Browser, LoginOptions, OAuthError, Status, TokenStore, canonical_url,
};
use pipewright_engine::mcp::servers;
use pipewright_engine::options::{duration_flag, exit};
use pipewright_engine::redact::Redactor;
use pipewright_engine::settings::Settings;

/// The `auth` subcommands.
#[derive(Debug, Subcommand)]
pub enum AuthCommand {
    /// Log in to a server in a browser (OAuth 2.1 with PKCE) and keep its
    /// tokens in the data directory.
    Login(LoginArgs),
    /// Forget a server's tokens (revoking them where the authorization
    /// server allows).
    Logout(LogoutArgs),
    /// Show whether a server is logged in, as which client, until when,
    /// with which scopes; without SERVER, every stored login.
    Status(StatusArgs),
}

/// The server an `auth` subcommand is about.
#[derive(Debug, Args)]
pub struct Target {
    /// An http(s) URL, or the name of an HTTP server declared in `--file`.
    pub server: String,
    /// The pipeline file that declares SERVER.
    #[arg(long, short = 'f', value_name = "FILE")]
    pub file: Option<PathBuf>,
}

/// Arguments of `auth logout`.
#[derive(Debug, Args)]
pub struct LogoutArgs {
    #[command(flatten)]
    pub target: Target,
    #[command(flatten)]
    pub fibe: crate::flags::FibeFlags,
}

/// Arguments of `auth login`.
#[derive(Debug, Args)]
pub struct LoginArgs {
    #[command(flatten)]
    pub target: Target,
    /// Print the authorization URL on stderr without opening a browser.
    #[arg(long)]
    pub no_browser: bool,
    /// A client id registered with the authorization server; without one
    /// pipewright registers itself (dynamic client registration).
    #[arg(long, value_name = "ID")]
    pub client_id: Option<String>,
    /// The secret of `--client-id`, for a confidential client (better
    /// given in the environment variable); ignored without `--client-id`.
    #[arg(
        long,
        value_name = "SECRET",
        env = "PIPEWRIGHT_OAUTH_CLIENT_SECRET",
        hide_env_values = true
    )]
    pub client_secret: Option<String>,
    /// The https URL of a Client ID Metadata Document you host, used as the
    /// client id where the authorization server supports them (else
    /// pipewright registers itself).
    #[arg(long, value_name = "URL")]
    pub client_id_url: Option<String>,
    /// Use the client-credentials grant (no browser, for CI): needs
    /// `--client-id` and `--client-secret` or `--private-key`.
    #[arg(long)]
    pub client_credentials: bool,
    /// A PEM private key (PKCS#8, EC P-256 or RSA) to sign a
    /// `private_key_jwt` client assertion with, for `--client-credentials`.
    #[arg(long, value_name = "FILE", requires = "client_credentials")]
    pub private_key: Option<PathBuf>,
    /// A scope to ask for (repeatable); by default the scopes the server
    /// names.
    #[arg(long = "scope", value_name = "SCOPE")]
    pub scopes: Vec<String>,
    /// How long to wait for the browser to come back (e.g. 90s, 5m).
    #[arg(long, value_name = "DURATION", default_value = "5m")]
    pub timeout: String,
    #[command(flatten)]
    pub fibe: crate::flags::FibeFlags,
}

/// Arguments of `auth status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// An http(s) URL, or the name of an HTTP server declared in `--file`;
    /// without it, every stored login.
    pub server: Option<String>,
    /// The pipeline file that declares SERVER.
    #[arg(long, short = 'f', value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub fibe: crate::flags::FibeFlags,
}

impl AuthCommand {
    /// Fibe's caps, for the file that declares the server.
    pub fn fibe(&self) -> &crate::flags::FibeFlags {
        match self {
            AuthCommand::Login(a) => &a.fibe,
            AuthCommand::Logout(a) => &a.fibe,
            AuthCommand::Status(a) => &a.fibe,
        }
    }
}

/// Runs an `auth` subcommand; returns the exit code.
pub async fn auth(cmd: AuthCommand, settings: &Settings) -> u8 {
    let store = match TokenStore::in_data_dir(settings.data_dir.as_deref()) {
        Ok(store) => store,
        Err(e) => return crate::report::usage(e),
    };
    match cmd {
        AuthCommand::Login(args) => login(args, &store, settings).await,
        AuthCommand::Logout(args) => logout(&args.target, &store, settings).await,
        AuthCommand::Status(args) => status(args, &store, settings),
    }
}

/// The canonical URL of the server a command names (a URL as it is, or a
/// name looked up among the HTTP servers of `--file`), with the `auth:`
/// block the file declares for it.
fn resolve(
    server: &str,
    file: Option<&PathBuf>,
    settings: &Settings,
) -> Result<(String, Option<AuthConfig>), u8> {
    if server.contains("://") {
        return canonical_url(server)
            .map(|url| (url, None))
            .map_err(crate::report::usage);
    }
    let Some(path) = file else {
        return Err(crate::report::usage(format!(
            "`{server}` is not an http(s) URL; to name a server of a pipeline file, add `--file FILE`"
        )));
    };
    let (source, loaded) = load_file_with(path, Dialect::Auto, &settings.load_options(Vec::new()));
    if pipewright_headless::report_diagnostics(&path.display().to_string(), &source, &loaded) {
        return Err(exit::INVALID);
    }
    let pipeline = loaded.pipeline.ok_or(exit::INVALID)?;
    let specs = servers::resolve(
        &pipeline,
        &[],
        None,
        &pipeline.vars,
        &settings.env,
        &Redactor::default(),
    )
    .map_err(crate::report::usage)?;
    match specs.get(server) {
        Some(ServerSpec::Http { url, auth, .. }) => canonical_url(url)
            .map(|url| (url, auth.clone()))
            .map_err(crate::report::usage),
        Some(ServerSpec::Stdio { .. }) => Err(crate::report::usage(format!(
            "server `{server}` of {} is a stdio server; only HTTP servers log in",
            path.display()
        ))),
        None => {
            let names: Vec<&str> = specs.keys().map(String::as_str).collect();
            Err(crate::report::usage(format!(
                "{} declares no server `{server}` (it has: {})",
                path.display(),
                if names.is_empty() {
                    "none".to_owned()
                } else {
                    names.join(", ")
                }
            )))
        }
    }
}

/// The exit code of a failed login or logout.
fn failure(e: &OAuthError) -> u8 {
    eprintln!("error: {e}");
    match e {
        OAuthError::Unreachable { .. } => exit::UNREACHABLE,
        OAuthError::BadUrl { .. } | OAuthError::NoDataDir => exit::INVALID,
        _ => exit::FAILED,
    }
}

async fn login(args: LoginArgs, store: &TokenStore, settings: &Settings) -> u8 {
    let (url, declared) = match resolve(&args.target.server, args.target.file.as_ref(), settings) {
        Ok(found) => found,
        Err(code) => return code,
    };
    let timeout = match duration_flag("timeout", Some(&args.timeout)) {
        Ok(Some(t)) => t,
        Ok(None) => LoginOptions::default().timeout,
        Err(e) => return crate::report::usage(e),
    };
    let declared = declared.unwrap_or_default();
    if args.client_credentials || (declared.client_credentials && args.client_id.is_none()) {
        return client_credentials(&url, args, declared, store).await;
    }
    if declared.assertion_grant.is_some() && args.client_id.is_none() {
        // `grant: jwt_bearer` / `id_jag`: the file's assertion, no browser.
        let config = AuthConfig {
            scopes: if args.scopes.is_empty() {
                declared.scopes.clone()
            } else {
                args.scopes
            },
            ..declared
        };
        return match auth::assertion_grant(&url, store, &config, None, &[]).await {
            Ok(record) => {
                println!("Logged in to {}", describe(&Status::of(&record)));
                exit::OK
            }
            Err(e) => failure(&e),
        };
    }
    let opts = LoginOptions {
        client_secret: args
            .client_secret
            .filter(|_| args.client_id.is_some())
            .or(declared
                .client_secret
                .filter(|_| declared.client_id.is_some())),
        client_id: args.client_id.or(declared.client_id),
        client_id_url: args.client_id_url.or(declared.client_id_url),
        known_client: None,
        scopes: if args.scopes.is_empty() {
            declared.scopes
        } else {
            args.scopes
        },
        challenge: None,
        browser: if args.no_browser {
            Browser::Skip
        } else {
            Browser::Try
        },
        browser_command: settings.env.var("BROWSER").map(str::to_owned),
        timeout,
        dpop: declared.dpop,
    };
    let show = |authorize_url: &str| {
        eprintln!(
            "To log in to {url}, open this URL in a browser (waiting {}):",
            args.timeout
        );
        eprintln!("{authorize_url}");
    };
    match auth::login(&url, store, &opts, &show).await {
        Ok(record) => {
            println!("Logged in to {}", describe(&Status::of(&record)));
            exit::OK
        }
        Err(e) => failure(&e),
    }
}

/// `auth login --client-credentials`: flags over the file's `auth:` block.
async fn client_credentials(
    url: &str,
    args: LoginArgs,
    declared: AuthConfig,
    store: &TokenStore,
) -> u8 {
    let private_key = match &args.private_key {
        Some(path) => match std::fs::read_to_string(path) {
            Ok(pem) => Some(pem),
            Err(e) => {
                return crate::report::usage(format!(
                    "cannot read the private key {}: {e}",
                    path.display()
                ));
            }
        },
        None => declared.private_key.clone(),
    };
    // A secret given here is kept (0600) so later runs can renew; one
    // declared in the file stays in its `${env.X}` and out of the store.
    let keep_secret = args.client_secret.is_some();
    let config = AuthConfig {
        client_secret: args.client_secret.or(declared.client_secret),
        client_id: args.client_id.or(declared.client_id),
        client_credentials: true,
        private_key,
        scopes: if args.scopes.is_empty() {
            declared.scopes
        } else {
            args.scopes
        },
        client_id_url: None,
        assertion_grant: None,
        dpop: declared.dpop,
    };
    if config.client_id.is_none()
        || (config.client_secret.is_none() && config.private_key.is_none())
    {
        return crate::report::usage(
            "`--client-credentials` needs `--client-id` and `--client-secret` (or PIPEWRIGHT_OAUTH_CLIENT_SECRET) or `--private-key`",
        );
    }
    match auth::client_credentials(url, store, &config, keep_secret, None, &[]).await {
        Ok(record) => {
            println!("Logged in to {}", describe(&Status::of(&record)));
            exit::OK
        }
        Err(e) => failure(&e),
    }
}

async fn logout(target: &Target, store: &TokenStore, settings: &Settings) -> u8 {
    let url = match resolve(&target.server, target.file.as_ref(), settings) {
        Ok((url, _)) => url,
        Err(code) => return code,
    };
    match auth::logout(store, &url).await {
        Ok(done) if done.removed => {
            let revoked = if done.revoked {
                " (revoked at the authorization server)"
            } else {
                ""
            };
            println!("Logged out of {url}{revoked}");
            exit::OK
        }
        Ok(_) => {
            println!("Not logged in to {url}");
            exit::OK
        }
        Err(e) => failure(&e),
    }
}

fn status(args: StatusArgs, store: &TokenStore, settings: &Settings) -> u8 {
    let shown: Vec<Status> = match &args.server {
        Some(server) => {
            let url = match resolve(server, args.file.as_ref(), settings) {
                Ok((url, _)) => url,
                Err(code) => return code,
            };
            match auth::status(store, &url) {
                Ok(status) => vec![status],
                Err(e) => return failure(&e),
            }
        }
        None => store.list().iter().map(Status::of).collect(),
    };
    if args.json {
        let list: Vec<_> = shown
            .iter()
            .map(|s| {
                json!({
                    "server": s.server_url,
                    "logged_in": s.logged_in,
                    "issuer": s.issuer,
                    "client_id": s.client_id,
                    "scopes": s.scopes,
                    "expires_at": s.expires_at.map(rfc3339),
                    "refreshable": s.refreshable,
                    "dpop_bound": s.dpop_bound,
                })
            })
            .collect();
        println!("{}", crate::json::pretty(&list));
    } else if shown.is_empty() {
        println!("No stored logins in {}", store.dir().display());
    } else {
        for s in &shown {
            if s.logged_in {
                println!("{}", describe(s));
            } else {
                println!("{}: not logged in", s.server_url);
            }
        }
    }
    exit::OK
}

/// `URL: logged in (issuer …, client …, scopes …, expires …)`.
fn describe(s: &Status) -> String {
    let mut parts = Vec::new();
    if let Some(issuer) = &s.issuer {
        parts.push(format!("issuer {issuer}"));
    }
    if let Some(client) = &s.client_id {
        parts.push(format!("client {client}"));
    }
    if !s.scopes.is_empty() {
        parts.push(format!("scopes {}", s.scopes.join(" ")));
    }
    match s.expires_at {
        Some(at) if at <= auth_now() && s.refreshable => {
            parts.push(format!("expired {}, refreshed on next use", rfc3339(at)));
        }
        Some(at) if at <= auth_now() => parts.push(format!("expired {}", rfc3339(at))),
        Some(at) => parts.push(format!("expires {}", rfc3339(at))),
        None => parts.push("no expiry given".to_owned()),
    }
    if s.refreshable {
        parts.push("refreshable".to_owned());
    }
    if s.dpop_bound {
        parts.push("DPoP-bound".to_owned());
    }
    format!("{}: logged in ({})", s.server_url, parts.join(", "))
}

fn auth_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Unix seconds as `2026-01-02T03:04:05Z`.
fn rfc3339(secs: u64) -> String {
    i64::try_from(secs)
        .ok()
        .and_then(|s| time::OffsetDateTime::from_unix_timestamp(s).ok())
        .and_then(|t| {
            t.format(&time::format_description::well_known::Rfc3339)
                .ok()
        })
        .unwrap_or_else(|| secs.to_string())
}
