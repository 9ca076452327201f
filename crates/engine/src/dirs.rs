//! Where pipewright keeps things on this machine: the config directory and
//! the data directory (saved runs, OAuth tokens, recovery copies), each
//! overridable by an environment variable for tests and portable setups.

use std::path::PathBuf;

fn project() -> Option<directories::ProjectDirs> {
    directories::ProjectDirs::from("dev", "pipewright", "pipewright")
}

/// The user data directory: `PIPEWRIGHT_DATA_DIR`, else the platform's.
pub fn data_dir() -> Option<PathBuf> {
    std::env::var_os("PIPEWRIGHT_DATA_DIR")
        .map(PathBuf::from)
        .or_else(|| project().map(|p| p.data_dir().to_path_buf()))
}

/// The config directory: `PIPEWRIGHT_CONFIG_DIR`, else the platform's.
pub fn config_dir() -> Option<PathBuf> {
    std::env::var_os("PIPEWRIGHT_CONFIG_DIR")
        .map(PathBuf::from)
        .or_else(|| project().map(|p| p.config_dir().to_path_buf()))
}
