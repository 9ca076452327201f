//! What the process that drives the engine was started with, as one value
//! the driver builds and hands in: its environment variables, its working
//! directory, its program, and the directories the platform keeps for the
//! user. The engine reads none of these from its process: `${env.X}`, the
//! `PIPEWRIGHT_*` settings, the judge's key, the browser a login opens,
//! the roots a server is told and the program the demo server runs as all
//! come from here. The command line builds one from its process; a test
//! builds its own; `serve` gives a caller's inline pipeline one that holds
//! only the variables `--allow-env` names.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The process's environment as values. Cloning is cheap (clones share
/// it). `Debug` names the variables, never their values.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Environment(Arc<Inner>);

#[derive(Clone, Default, PartialEq, Eq)]
struct Inner {
    vars: BTreeMap<OsString, OsString>,
    working_dir: Option<PathBuf>,
    program: Option<PathBuf>,
    dirs: PlatformDirs,
}

/// Where the platform keeps things for the user, as the driver found them
/// (the `directories` crate reads `HOME` and the `XDG_*` variables, so it
/// is asked by the driver, not here).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlatformDirs {
    /// The user's home directory: what `~` and `${userHome}` stand for.
    pub home: Option<PathBuf>,
    /// The user's config directory (`~/.config` on Linux): where other MCP
    /// clients keep their config files.
    pub config: Option<PathBuf>,
    /// pipewright's data directory by the platform's rules (saved runs,
    /// OAuth tokens, recovery copies), unless `PIPEWRIGHT_DATA_DIR` says.
    pub pipewright_data: Option<PathBuf>,
    /// pipewright's config directory by the platform's rules
    /// (`config.yaml`, themes), unless `PIPEWRIGHT_CONFIG_DIR` says.
    pub pipewright_config: Option<PathBuf>,
}

impl Environment {
    /// An environment with `vars`, and no working directory, program or
    /// platform directories (see the `with_` methods).
    pub fn with_vars<K, V>(vars: impl IntoIterator<Item = (K, V)>) -> Environment
    where
        K: Into<OsString>,
        V: Into<OsString>,
    {
        Environment(Arc::new(Inner {
            vars: vars
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
            ..Inner::default()
        }))
    }

    /// The same, with `dir` as the working directory.
    pub fn with_working_dir(mut self, dir: Option<PathBuf>) -> Environment {
        Arc::make_mut(&mut self.0).working_dir = dir;
        self
    }

    /// The same, with `program` as the running program's path.
    pub fn with_program(mut self, program: Option<PathBuf>) -> Environment {
        Arc::make_mut(&mut self.0).program = program;
        self
    }

    /// The same, with the platform's directories.
    pub fn with_dirs(mut self, dirs: PlatformDirs) -> Environment {
        Arc::make_mut(&mut self.0).dirs = dirs;
        self
    }

    /// The variable `name`, when it is set and is Unicode.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.var_os(name).and_then(OsStr::to_str)
    }

    /// The variable `name` as the process was given it.
    pub fn var_os(&self, name: &str) -> Option<&OsStr> {
        self.0.vars.get(OsStr::new(name)).map(OsString::as_os_str)
    }

    /// Every variable that is Unicode, by name.
    pub fn vars(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0
            .vars
            .iter()
            .filter_map(|(k, v)| Some((k.to_str()?, v.to_str()?)))
    }

    /// The working directory the process started in.
    pub fn working_dir(&self) -> Option<&Path> {
        self.0.working_dir.as_deref()
    }

    /// `path` from the working directory (as it is when absolute); `None`
    /// when it is relative and the working directory is not known.
    pub fn absolute(&self, path: &Path) -> Option<PathBuf> {
        if path.is_absolute() {
            Some(path.to_path_buf())
        } else {
            self.working_dir().map(|d| d.join(path))
        }
    }

    /// The running program's path (the built-in demo server is it, run
    /// again).
    pub fn program(&self) -> Option<&Path> {
        self.0.program.as_deref()
    }

    /// Where the platform keeps things for the user.
    pub fn dirs(&self) -> &PlatformDirs {
        &self.0.dirs
    }

    /// Only the variables in `names`, nothing else (no directories, no
    /// program): what a caller that is not trusted may read.
    pub fn only(&self, names: &[String]) -> Environment {
        Environment::with_vars(
            self.0
                .vars
                .iter()
                .filter(|(k, _)| names.iter().any(|n| OsStr::new(n) == k.as_os_str()))
                .map(|(k, v)| (k.clone(), v.clone())),
        )
    }
}

impl std::fmt::Debug for Environment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Environment")
            .field("vars", &self.0.vars.keys().collect::<Vec<_>>())
            .field("working_dir", &self.0.working_dir)
            .field("program", &self.0.program)
            .field("dirs", &self.0.dirs)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_are_read_from_the_value_and_debug_shows_no_value() {
        let env = Environment::with_vars([("TOKEN", "s3cret"), ("REGION", "eu")])
            .with_working_dir(Some("/work".into()));
        assert_eq!(env.var("TOKEN"), Some("s3cret"));
        assert_eq!(env.var("NOPE"), None);
        assert_eq!(env.working_dir(), Some(Path::new("/work")));
        let shown = format!("{env:?}");
        assert!(
            shown.contains("TOKEN") && !shown.contains("s3cret"),
            "{shown}"
        );
        let limited = env.only(&["REGION".to_owned()]);
        assert_eq!(limited.var("REGION"), Some("eu"));
        assert_eq!(limited.var("TOKEN"), None);
        assert_eq!(limited.working_dir(), None);
        assert_eq!(Environment::default().var("PATH"), None);
    }
}
