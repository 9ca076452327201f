//! The loopback redirect listener of a login (RFC 8252 §7.3): an HTTP
//! listener on 127.0.0.1 at an ephemeral port that waits for the browser to
//! come back with `code` and `state`, checks the state, and tells the
//! browser it may close the tab. A request with a wrong or missing state
//! (a browser's prefetch, a port scan, another tab) gets an error page and
//! the listener waits on, up to [`MAX_WRONG_STATE`] of them.

use std::{net::Ipv4Addr, time::Duration};

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
    sync::mpsc,
};

use super::error::OAuthError;

/// The path the authorization server redirects to.
const CALLBACK_PATH: &str = "/callback";
/// Longest request head read from the browser.
const MAX_HEAD: usize = 16 * 1024;
/// How long one connection may take to send its request.
const READ_WAIT: Duration = Duration::from_secs(10);
/// Requests to the callback path with a wrong or missing `state` that a
/// login lets pass before it gives up; the login's own timeout bounds it
/// too.
pub(crate) const MAX_WRONG_STATE: usize = 16;

/// What the authorization server sent back on success.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Callback {
    /// The authorization code.
    pub code: String,
    /// The RFC 9207 `iss` parameter, when sent.
    pub iss: Option<String>,
}

impl std::fmt::Debug for Callback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Callback")
            .field("code", &"…")
            .field("iss", &self.iss)
            .finish()
    }
}

/// A bound loopback listener.
pub(crate) struct Listener {
    listener: TcpListener,
    redirect_uri: String,
}

impl Listener {
    /// Binds 127.0.0.1 on a port the system picks.
    pub(crate) async fn bind() -> Result<Self, OAuthError> {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .await
            .map_err(|e| OAuthError::Listen(e.to_string()))?;
        let port = listener
            .local_addr()
            .map_err(|e| OAuthError::Listen(e.to_string()))?
            .port();
        Ok(Self {
            listener,
            redirect_uri: format!("http://127.0.0.1:{port}{CALLBACK_PATH}"),
        })
    }

    /// `http://127.0.0.1:PORT/callback`.
    pub(crate) fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    /// Serves the browser until a request with this login's state reaches
    /// the callback path, and returns what it carried. Other paths (a
    /// favicon) get a 404; a callback with a wrong or missing state gets an
    /// error page and is passed over, [`MAX_WRONG_STATE`] times at most; a
    /// connection that sends nothing does not hold up the others.
    pub(crate) async fn wait(&self, expected_state: &str) -> Result<Callback, OAuthError> {
        let (tx, mut rx) = mpsc::channel(4);
        let mut wrong = 0;
        loop {
            tokio::select! {
                accepted = self.listener.accept() => {
                    let Ok((stream, _)) = accepted else { continue };
                    let tx = tx.clone();
                    let state = expected_state.to_owned();
                    tokio::spawn(async move {
                        if let Some(outcome) = serve(stream, &state).await {
                            let _ = tx.send(outcome).await;
                        }
                    });
                }
                Some(outcome) = rx.recv() => match outcome {
                    Err(OAuthError::StateMismatch) if wrong < MAX_WRONG_STATE => {
                        wrong += 1;
                        tracing::debug!("a request to the login's callback had a wrong state ({wrong})");
                    }
                    outcome => return outcome,
                },
            }
        }
    }
}

/// Reads one request, answers it, and returns the callback's outcome when
/// the request was for the callback path.
async fn serve(mut stream: TcpStream, state: &str) -> Option<Result<Callback, OAuthError>> {
    let head = tokio::time::timeout(READ_WAIT, read_head(&mut stream))
        .await
        .ok()??;
    let target = head
        .lines()
        .next()
        .and_then(|line| line.strip_prefix("GET "))
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or("");
    let outcome = parse_callback(target, state);
    let (status, text) = match &outcome {
        None => ("404 Not Found", "Not found.".to_owned()),
        Some(Ok(_)) => (
            "200 OK",
            "pipewright received the authorization. You can close this tab and return to the terminal."
                .to_owned(),
        ),
        Some(Err(OAuthError::StateMismatch)) => (
            "400 Bad Request",
            "This request does not belong to the login pipewright is waiting for (its `state` does not match); pipewright keeps waiting for the right one."
                .to_owned(),
        ),
        Some(Err(e)) => ("400 Bad Request", format!("pipewright could not log in: {e}")),
    };
    let body = format!(
        "<!doctype html><meta charset=utf-8><title>pipewright</title><p>{}</p>\n",
        escape_html(&text)
    );
    let response = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\ncache-control: no-store\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
    outcome
}

/// The request line and headers, up to the blank line.
async fn read_head(stream: &mut TcpStream) -> Option<String> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 2048];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 || buf.len() + n > MAX_HEAD {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Some(String::from_utf8_lossy(&buf).into_owned())
}

/// What a request target (`/callback?code=…&state=…`) means: `None` when it
/// is not the callback path, else the code, or why the login failed. The
/// state is checked first, so a forged error redirect cannot end a login
/// with a misleading message either.
pub(crate) fn parse_callback(
    target: &str,
    expected_state: &str,
) -> Option<Result<Callback, OAuthError>> {
    let url = reqwest::Url::parse(&format!("http://127.0.0.1{target}")).ok()?;
    if url.path() != CALLBACK_PATH {
        return None;
    }
    let param = |name: &str| {
        url.query_pairs()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    };
    if param("state").as_deref() != Some(expected_state) {
        return Some(Err(OAuthError::StateMismatch));
    }
    if let Some(error) = param("error") {
        return Some(Err(OAuthError::Denied {
            error,
            description: param("error_description"),
        }));
    }
    Some(match param("code") {
        Some(code) if !code.is_empty() => Ok(Callback {
            code,
            iss: param("iss"),
        }),
        _ => Err(OAuthError::NoCode),
    })
}

fn escape_html(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_callback_yields_the_code_when_the_state_matches() {
        assert_eq!(
            parse_callback("/callback?code=abc&state=s1", "s1"),
            Some(Ok(Callback {
                code: "abc".into(),
                iss: None
            }))
        );
        assert_eq!(
            parse_callback(
                "/callback?state=s%201&code=a%2Bb&iss=https%3A%2F%2Fas",
                "s 1"
            ),
            Some(Ok(Callback {
                code: "a+b".into(),
                iss: Some("https://as".into())
            }))
        );
    }

    #[test]
    fn a_wrong_or_missing_state_is_refused() {
        assert_eq!(
            parse_callback("/callback?code=abc&state=other", "s1"),
            Some(Err(OAuthError::StateMismatch))
        );
        assert_eq!(
            parse_callback("/callback?code=abc", "s1"),
            Some(Err(OAuthError::StateMismatch))
        );
        assert_eq!(
            parse_callback("/callback?error=access_denied&state=forged", "s1"),
            Some(Err(OAuthError::StateMismatch))
        );
    }

    #[test]
    fn a_denied_authorization_says_why() {
        let outcome = parse_callback(
            "/callback?error=access_denied&error_description=the%20user%20said%20no&state=s1",
            "s1",
        );
        let Some(Err(e)) = outcome else {
            panic!("denied: {outcome:?}")
        };
        assert_eq!(
            e.to_string(),
            "the authorization was refused: access_denied (the user said no)"
        );
        assert_eq!(
            parse_callback("/callback?state=s1", "s1"),
            Some(Err(OAuthError::NoCode))
        );
    }

    #[test]
    fn other_paths_are_not_the_callback() {
        assert_eq!(parse_callback("/favicon.ico", "s1"), None);
        assert_eq!(parse_callback("/", "s1"), None);
        assert_eq!(parse_callback("", "s1"), None);
    }

    /// Sends `GET target` to the listener on `port`; the reply.
    async fn get(port: u16, target: &str) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", port))
            .await
            .expect("connect");
        s.write_all(format!("GET {target} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes())
            .await
            .expect("write");
        let mut reply = String::new();
        s.read_to_string(&mut reply).await.expect("read");
        reply
    }

    fn port_of(listener: &Listener) -> u16 {
        listener
            .redirect_uri()
            .trim_start_matches("http://127.0.0.1:")
            .trim_end_matches("/callback")
            .parse()
            .expect("port")
    }

    /// A prefetch, a scan or another tab hitting the callback with the
    /// wrong state, or none, used to end the login; each gets an error
    /// page and the login goes on to the right redirect.
    #[tokio::test]
    async fn a_callback_with_a_wrong_or_missing_state_is_answered_and_the_login_waits_on() {
        let listener = Listener::bind().await.expect("bind");
        let port = port_of(&listener);
        let browser = tokio::spawn(async move {
            let mut replies = Vec::new();
            for target in [
                "/callback?code=stolen&state=other",
                "/callback?code=stolen",
                "/callback",
                "/callback?error=access_denied&state=forged",
                "/callback?code=c0de&state=st",
            ] {
                replies.push(get(port, target).await);
            }
            replies
        });
        let got = listener.wait("st").await.expect("the right callback");
        assert_eq!(got.code, "c0de");
        let replies = browser.await.expect("browser");
        for wrong in &replies[..4] {
            assert!(wrong.starts_with("HTTP/1.1 400"), "{wrong}");
            assert!(wrong.contains("pipewright keeps waiting"), "{wrong}");
        }
        assert!(replies[4].starts_with("HTTP/1.1 200"), "{}", replies[4]);
    }

    /// Waiting on is bounded: past the limit of wrong requests the login
    /// ends with the state error.
    #[tokio::test]
    async fn a_flood_of_wrong_states_ends_the_login_after_the_limit() {
        let listener = Listener::bind().await.expect("bind");
        let port = port_of(&listener);
        let browser = tokio::spawn(async move {
            for i in 0..=MAX_WRONG_STATE {
                get(port, &format!("/callback?code=c&state=wrong{i}")).await;
            }
        });
        let outcome = listener.wait("st").await;
        assert_eq!(outcome, Err(OAuthError::StateMismatch));
        browser.await.expect("browser");
    }

    #[tokio::test]
    async fn the_listener_answers_the_browser_and_returns_the_code() {
        let listener = Listener::bind().await.expect("bind");
        let uri = listener.redirect_uri().to_owned();
        assert!(uri.starts_with("http://127.0.0.1:") && uri.ends_with("/callback"));
        let port: u16 = uri
            .trim_start_matches("http://127.0.0.1:")
            .trim_end_matches("/callback")
            .parse()
            .expect("port");
        let browser = tokio::spawn(async move {
            let mut replies = Vec::new();
            for target in ["/favicon.ico", "/callback?code=c0de&state=st"] {
                let mut s = TcpStream::connect(("127.0.0.1", port))
                    .await
                    .expect("connect");
                s.write_all(format!("GET {target} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes())
                    .await
                    .expect("write");
                let mut reply = String::new();
                s.read_to_string(&mut reply).await.expect("read");
                replies.push(reply);
            }
            replies
        });
        let got = listener.wait("st").await.expect("callback");
        assert_eq!(got.code, "c0de");
        let replies = browser.await.expect("browser");
        assert!(replies[0].starts_with("HTTP/1.1 404"), "{}", replies[0]);
        assert!(replies[1].starts_with("HTTP/1.1 200"), "{}", replies[1]);
    }
}
