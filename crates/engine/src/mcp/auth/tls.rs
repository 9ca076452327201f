//! The TLS provider of every OAuth request.

/// Installs the TLS provider reqwest is built to need (`ring`), so an
/// OAuth request made outside the binary's `main` cannot panic for want
/// of one. Installing twice is harmless.
pub(crate) fn ensure_tls() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}
