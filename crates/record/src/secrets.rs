//! Which values a recording masks: the values of the environment variables
//! the user names (`--secret-env`), of the inherited ones whose names look
//! secret, and of the credential headers a client sends (`Authorization`,
//! `Cookie`, `X-Api-Key`, … and `--secret-header` names), each added to
//! the engine's [`Redactor`] before anything that may hold it is written.

use pipewright_engine::redact::Redactor;

/// Parts of an environment variable's name that make its value a secret.
const SECRET_NAME_PARTS: &[&str] = &[
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "AUTH",
];

/// Values too common to mask wherever they appear, whatever their
/// variable's name (`USE_AUTH=true`).
const TOO_COMMON: &[&str] = &[
    "true", "false", "yes", "no", "none", "null", "on", "off", "enabled", "disabled",
];

/// Headers whose values are credentials, lower case.
pub const CREDENTIAL_HEADERS: &[&str] = &[
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
    "x-api-key",
    "api-key",
    "x-auth-token",
];

/// Whether an environment variable's name says its value is a secret.
pub fn looks_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_NAME_PARTS.iter().any(|part| upper.contains(part))
}

/// The secrets of one recording.
#[derive(Debug, Clone, Default)]
pub struct Secrets {
    redactor: Redactor,
    /// More header names whose values are credentials, lower case.
    headers: Vec<String>,
}

impl Secrets {
    /// Secrets masked by `redactor` (shared: what is added later is masked
    /// in every file written with it).
    pub fn new(redactor: Redactor) -> Secrets {
        Secrets {
            redactor,
            headers: Vec::new(),
        }
    }

    /// The redactor every writer masks with.
    pub fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// Takes the environment the server runs with: the values of the
    /// variables `named` (the user's `--secret-env`), and, when
    /// `by_name`, of every variable whose name looks secret.
    pub fn env<'a>(
        &self,
        vars: impl IntoIterator<Item = (&'a str, &'a str)>,
        named: &[String],
        by_name: bool,
    ) {
        for (name, value) in vars {
            let chosen = named.iter().any(|n| n == name);
            if chosen || (by_name && looks_secret(name) && !common(value)) {
                self.redactor.add(value.to_owned());
            }
        }
    }

    /// Also treats the values of headers `names` as credentials.
    pub fn with_headers(mut self, names: &[String]) -> Secrets {
        self.headers
            .extend(names.iter().map(|n| n.trim().to_ascii_lowercase()));
        self
    }

    /// Whether the header `name` (any case) carries a credential.
    pub fn is_credential(&self, name: &str) -> bool {
        let lower = name.to_ascii_lowercase();
        CREDENTIAL_HEADERS.contains(&lower.as_str()) || self.headers.contains(&lower)
    }

    /// Masks a header's value from now on if the header is a credential:
    /// the whole value, the credential after its scheme (`Bearer X`: `X`),
    /// and each cookie's value.
    pub fn header(&self, name: &str, value: &[u8]) {
        if !self.is_credential(name) {
            return;
        }
        let value = String::from_utf8_lossy(value);
        let value = value.trim();
        self.redactor.add(value.to_owned());
        if let Some((_, credential)) = value.split_once(' ') {
            self.redactor.add(credential.trim().to_owned());
        }
        if name.eq_ignore_ascii_case("cookie") || name.eq_ignore_ascii_case("set-cookie") {
            for pair in value.split(';') {
                if let Some((_, v)) = pair.split_once('=') {
                    self.redactor.add(v.trim().to_owned());
                }
            }
        }
    }
}

fn common(value: &str) -> bool {
    TOO_COMMON
        .iter()
        .any(|c| c.eq_ignore_ascii_case(value.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_and_header_values_are_masked() {
        let s = Secrets::new(Redactor::default()).with_headers(&["X-Tenant".into()]);
        s.env(
            [
                ("GITHUB_TOKEN", "ghp_abcdef123"),
                ("USE_AUTH", "true"),
                ("PATH", "/usr/bin"),
                ("PLAIN", "named-secret"),
            ],
            &["PLAIN".into()],
            true,
        );
        s.header("Authorization", b"Bearer tok-123456");
        s.header("Cookie", b"sid=cookie-value; t=ab");
        s.header("x-tenant", b"tenant-42");
        s.header("Accept", b"application/json");
        let masked = s.redactor().text(
            "ghp_abcdef123 true /usr/bin named-secret tok-123456 cookie-value dark tenant-42 application/json",
        );
        assert_eq!(
            masked,
            "*** true /usr/bin *** *** *** dark *** application/json"
        );
        assert!(looks_secret("openai_api_key"));
        assert!(!looks_secret("HOME"));
    }
}
