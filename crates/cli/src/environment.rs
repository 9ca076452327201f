//! The one place the process's environment is read: its variables, its
//! working directory, its program and the platform's directories become
//! the engine's `Environment`, which `main` turns into the `Settings`
//! every command hands the engine (the engine reads none of them itself).

use pipewright_engine::environment::{Environment, PlatformDirs};

/// This process's environment, as the engine takes it.
pub fn of_process() -> Environment {
    let project = directories::ProjectDirs::from("dev", "pipewright", "pipewright");
    let base = directories::BaseDirs::new();
    Environment::with_vars(std::env::vars_os())
        .with_working_dir(std::env::current_dir().ok())
        .with_program(std::env::current_exe().ok())
        .with_dirs(PlatformDirs {
            home: base.as_ref().map(|b| b.home_dir().to_path_buf()),
            config: base.as_ref().map(|b| b.config_dir().to_path_buf()),
            pipewright_data: project.as_ref().map(|p| p.data_dir().to_path_buf()),
            pipewright_config: project.as_ref().map(|p| p.config_dir().to_path_buf()),
        })
}
