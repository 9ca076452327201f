//! Where OAuth tokens live: one JSON file per server under `auth/` in the
//! data directory, keyed by the server's canonical URL, readable by the
//! owner only (files 0600, directory 0700 on Unix).

use std::{
    fmt, fs,
    io::Write,
    path::{Path, PathBuf},
    time::{SystemTime, UNIX_EPOCH},
};

use oauth2::TokenResponse;
use rmcp::transport::auth::{AuthorizationMetadata, StoredCredentials};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::dpop::DpopKey;
use super::error::OAuthError;

/// Seconds since the Unix epoch.
pub(crate) fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The server's canonical URI (MCP authorization, RFC 8707): scheme, host,
/// port and path, lower-cased where URLs are case-blind, without user info,
/// query, fragment or a trailing slash. Tokens are keyed by it and it is the
/// `resource` pipewright asks tokens for.
pub fn canonical_url(url: &str) -> Result<String, OAuthError> {
    let bad = || OAuthError::BadUrl {
        url: url
            .split(['?', '#'])
            .next()
            .unwrap_or_default()
            .rsplit('@')
            .next()
            .unwrap_or_default()
            .to_owned(),
    };
    let mut parsed = reqwest::Url::parse(url.trim()).map_err(|_| bad())?;
    if !matches!(parsed.scheme(), "http" | "https") || !parsed.has_host() {
        return Err(bad());
    }
    let _ = parsed.set_username("");
    let _ = parsed.set_password(None);
    parsed.set_query(None);
    parsed.set_fragment(None);
    let text = parsed.to_string();
    Ok(match text.strip_suffix('/') {
        Some(trimmed) if parsed.path() != "/" => trimmed.to_owned(),
        _ => text,
    })
}

/// Everything a login leaves behind for one server: where to refresh, as
/// whom, and the tokens. `Debug` shows no secret.
#[derive(Clone, Serialize, Deserialize)]
pub struct TokenRecord {
    /// The server's canonical URL (the key).
    pub server_url: String,
    /// The RFC 8707 `resource` the tokens were asked for.
    pub resource: String,
    /// The authorization server's metadata, so a refresh needs no discovery.
    pub metadata: AuthorizationMetadata,
    /// The client id pipewright registered (or was given).
    pub client_id: String,
    /// The client secret, when the authorization server issued one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// The loopback redirect URI of the login.
    pub redirect_uri: String,
    /// The tokens as rmcp keeps them (response, scopes, time received).
    pub credentials: StoredCredentials,
    /// True when the tokens came from the client-credentials grant: they
    /// are renewed by that grant, not by a refresh token or a browser.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub client_credentials: bool,
    /// The login's DPoP proof key (RFC 9449), when its tokens are bound
    /// to one: kept here only, beside the tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop: Option<DpopKey>,
}

impl fmt::Debug for TokenRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenRecord")
            .field("server_url", &self.server_url)
            .field("resource", &self.resource)
            .field("issuer", &self.metadata.issuer)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .field("credentials", &self.credentials)
            .field("client_credentials", &self.client_credentials)
            .field("dpop", &self.dpop.as_ref().map(|_| "…"))
            .finish()
    }
}

impl TokenRecord {
    /// The access token, if the login produced one.
    pub(crate) fn access_token(&self) -> Option<&str> {
        self.credentials
            .token_response
            .as_ref()
            .map(|t| t.access_token().secret().as_str())
    }

    /// True when the access token is DPoP-bound (`token_type: DPoP`): it
    /// is only ever sent with a proof of the login's key.
    pub fn dpop_bound(&self) -> bool {
        self.credentials
            .token_response
            .as_ref()
            .is_some_and(|t| t.token_type().as_ref().eq_ignore_ascii_case("dpop"))
    }

    /// True when a refresh token is kept.
    pub fn refreshable(&self) -> bool {
        self.credentials
            .token_response
            .as_ref()
            .is_some_and(|t| t.refresh_token().is_some())
    }

    /// When the access token expires (Unix seconds), when the server said.
    pub fn expires_at(&self) -> Option<u64> {
        let token = self.credentials.token_response.as_ref()?;
        let lifetime = token.expires_in()?.as_secs();
        Some(self.credentials.token_received_at?.saturating_add(lifetime))
    }

    /// True when the access token is usable at `now`: it exists and is not
    /// within a quarter of its lifetime (at most 30 s) of expiring.
    pub fn is_fresh(&self, now: u64) -> bool {
        if self.access_token().is_none() {
            return false;
        }
        let Some(expires_at) = self.expires_at() else {
            return true;
        };
        let lifetime = self
            .credentials
            .token_response
            .as_ref()
            .and_then(|t| t.expires_in())
            .map_or(0, |d| d.as_secs());
        let margin = (lifetime / 4).min(30);
        now.saturating_add(margin) < expires_at
    }

    /// The scopes granted.
    pub fn scopes(&self) -> &[String] {
        &self.credentials.granted_scopes
    }

    /// The authorization server's issuer identifier.
    pub fn issuer(&self) -> Option<&str> {
        self.metadata.issuer.as_deref()
    }
}

/// The token files of one directory.
#[derive(Debug, Clone)]
pub struct TokenStore {
    dir: PathBuf,
}

impl TokenStore {
    /// A store in `dir` (created on the first save).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The store in `auth/` of the data directory (`data_dir`: the
    /// driver's `Settings::data_dir`); an error when there is none.
    pub fn in_data_dir(data_dir: Option<&Path>) -> Result<Self, OAuthError> {
        data_dir
            .map(|dir| Self::new(dir.join("auth")))
            .ok_or(OAuthError::NoDataDir)
    }

    /// The directory of the store.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of the server at `url` (already canonical).
    pub fn path(&self, url: &str) -> PathBuf {
        let digest = Sha256::digest(url.as_bytes());
        self.dir
            .join(format!("{}.json", hex::encode(&digest[..12])))
    }

    fn error(&self, path: &Path, reason: impl fmt::Display) -> OAuthError {
        OAuthError::Store {
            path: path.display().to_string(),
            reason: reason.to_string(),
        }
    }

    /// The record of the server at `url` (canonical), if logged in.
    pub fn load(&self, url: &str) -> Result<Option<TokenRecord>, OAuthError> {
        let path = self.path(url);
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(self.error(&path, e)),
        };
        let record: TokenRecord = serde_json::from_slice(&bytes)
            .map_err(|e| self.error(&path, format!("unreadable ({e}); log in again")))?;
        Ok((record.server_url == url).then_some(record))
    }

    /// Writes the record (atomically: a 0600 temporary file renamed over
    /// the old one) into the 0700 directory.
    pub fn save(&self, record: &TokenRecord) -> Result<(), OAuthError> {
        self.make_dir()?;
        let path = self.path(&record.server_url);
        let bytes = serde_json::to_vec_pretty(record).map_err(|e| self.error(&path, e))?;
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        let written = (|| {
            let mut options = fs::OpenOptions::new();
            options.write(true).create(true).truncate(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            let mut file = options.open(&tmp)?;
            #[cfg(unix)]
            file.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
            file.write_all(&bytes)?;
            file.sync_all()?;
            fs::rename(&tmp, &path)
        })();
        if let Err(e) = written {
            let _ = fs::remove_file(&tmp);
            return Err(self.error(&path, e));
        }
        Ok(())
    }

    fn make_dir(&self) -> Result<(), OAuthError> {
        if let Some(parent) = self.dir.parent() {
            fs::create_dir_all(parent).map_err(|e| self.error(parent, e))?;
        }
        let mut builder = fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        match builder.create(&self.dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(self.error(&self.dir, e)),
        }
        #[cfg(unix)]
        fs::set_permissions(
            &self.dir,
            std::os::unix::fs::PermissionsExt::from_mode(0o700),
        )
        .map_err(|e| self.error(&self.dir, e))?;
        Ok(())
    }

    /// Deletes the record of the server at `url`; true when there was one.
    pub fn remove(&self, url: &str) -> Result<bool, OAuthError> {
        let path = self.path(url);
        match fs::remove_file(&path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(self.error(&path, e)),
        }
    }

    /// Every readable record, by server URL.
    pub fn list(&self) -> Vec<TokenRecord> {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut records: Vec<TokenRecord> = entries
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
            .filter_map(|e| fs::read(e.path()).ok())
            .filter_map(|bytes| serde_json::from_slice(&bytes).ok())
            .collect();
        records.sort_by(|a, b| a.server_url.cmp(&b.server_url));
        records
    }
}

/// A record for tests: tokens `at-SECRET` and `rt-SECRET` received at
/// `received`, living `lifetime` s, from an authorization server at
/// 127.0.0.1:1 (where nothing listens).
#[cfg(test)]
pub(crate) fn sample_record(url: &str, received: u64, lifetime: Option<u64>) -> TokenRecord {
    use rmcp::transport::auth::OAuthTokenResponse;

    let mut response = serde_json::json!({
        "access_token": "at-SECRET",
        "token_type": "bearer",
        "refresh_token": "rt-SECRET",
    });
    if let Some(lifetime) = lifetime {
        response["expires_in"] = lifetime.into();
    }
    let response: OAuthTokenResponse = serde_json::from_value(response).expect("token");
    TokenRecord {
        server_url: url.to_owned(),
        resource: url.to_owned(),
        metadata: serde_json::from_value(serde_json::json!({
            "authorization_endpoint": "http://127.0.0.1:1/authorize",
            "token_endpoint": "http://127.0.0.1:1/token",
            "issuer": "http://127.0.0.1:1",
        }))
        .expect("metadata"),
        client_id: "c1".into(),
        client_secret: Some("cs-SECRET".into()),
        redirect_uri: "http://127.0.0.1:2/callback".into(),
        credentials: StoredCredentials::new(
            "c1".into(),
            Some(response),
            vec!["mcp".into()],
            Some(received),
        ),
        client_credentials: false,
        dpop: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(url: &str, received: u64, lifetime: Option<u64>) -> TokenRecord {
        sample_record(url, received, lifetime)
    }

    #[test]
    fn canonical_urls_drop_what_is_not_the_resource() {
        for (given, canonical) in [
            ("http://127.0.0.1:8000/mcp", "http://127.0.0.1:8000/mcp"),
            ("HTTPS://Example.COM/mcp/", "https://example.com/mcp"),
            (
                "https://u:p@example.com/mcp?k=v#f",
                "https://example.com/mcp",
            ),
            ("https://example.com", "https://example.com/"),
            ("https://example.com:443/", "https://example.com/"),
        ] {
            assert_eq!(canonical_url(given).as_deref(), Ok(canonical), "{given}");
        }
        for bad in ["ftp://example.com", "not a url", "file:///tmp/x", ""] {
            assert!(
                matches!(canonical_url(bad), Err(OAuthError::BadUrl { .. })),
                "{bad}"
            );
        }
        let Err(e) = canonical_url("ftp://u:pw@h/x?token=abc") else {
            panic!("ftp is refused");
        };
        assert!(!e.to_string().contains("pw") && !e.to_string().contains("abc"));
    }

    #[test]
    fn freshness_keeps_a_margin_of_a_quarter_of_the_lifetime() {
        let r = record("http://h/mcp", 1000, Some(3600));
        assert_eq!(r.expires_at(), Some(4600));
        assert!(r.is_fresh(1000));
        assert!(r.is_fresh(4569));
        assert!(!r.is_fresh(4570), "30 s margin at most");
        let short = record("http://h/mcp", 1000, Some(4));
        assert!(short.is_fresh(1002));
        assert!(!short.is_fresh(1003));
        let forever = record("http://h/mcp", 1000, None);
        assert!(forever.is_fresh(u64::MAX - 1));
    }

    #[test]
    fn the_store_round_trips_with_owner_only_modes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = TokenStore::new(dir.path().join("auth"));
        let url = "http://127.0.0.1:9/mcp";
        assert!(store.load(url).expect("load").is_none());
        store.save(&record(url, 5, Some(60))).expect("save");
        let loaded = store.load(url).expect("load").expect("saved");
        assert_eq!(loaded.access_token(), Some("at-SECRET"));
        assert_eq!(loaded.scopes(), ["mcp".to_owned()]);
        assert_eq!(store.list().len(), 1);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| fs::metadata(p).expect("meta").permissions().mode() & 0o777;
            assert_eq!(mode(&store.path(url)), 0o600);
            assert_eq!(mode(store.dir()), 0o700);
        }
        assert!(
            store
                .load("http://127.0.0.1:9/other")
                .expect("load")
                .is_none()
        );
        assert!(store.remove(url).expect("remove"));
        assert!(!store.remove(url).expect("remove again"));
        assert!(store.load(url).expect("load").is_none());
    }

    #[test]
    fn a_corrupt_file_is_an_error_without_its_content() {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = TokenStore::new(dir.path());
        let url = "http://127.0.0.1:9/mcp";
        fs::write(store.path(url), "{\"access_token\": \"at-SECRET\"").expect("write");
        let e = store.load(url).expect_err("corrupt");
        assert!(matches!(e, OAuthError::Store { .. }));
        assert!(!e.to_string().contains("SECRET"), "{e}");
    }

    #[test]
    fn debug_of_a_record_shows_no_secret() {
        let shown = format!("{:?}", record("http://h/mcp", 1, Some(60)));
        assert!(shown.contains("http://h/mcp"), "{shown}");
        assert!(!shown.contains("SECRET"), "{shown}");
    }
}
